import Foundation

/// Window functions.
public enum Window {
    /// A symmetric Hann window of `length` samples.
    public static func hann(length: Int) -> [Float] {
        guard length > 1 else { return [Float](repeating: 1, count: max(length, 0)) }
        return (0..<length).map { Float(0.5 - 0.5 * cos(2 * Double.pi * Double($0) / Double(length - 1))) }
    }

    /// The right half of a Hann window as Scheirer's envelope smoother:
    /// h[i] = cos^2(pi i / (2L)), i = 0...L, so h[0] = 1 and h[L] = 0.
    public static func halfHann(length: Int) -> [Float] {
        guard length > 0 else { return [1] }
        return (0...length).map { index in
            let value = cos(Double.pi * Double(index) / (2 * Double(length)))
            return Float(value * value)
        }
    }
}
