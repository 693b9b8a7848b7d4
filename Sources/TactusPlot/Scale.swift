import Foundation

/// Maps a data interval (the domain: seconds, BPM, dB...) linearly onto a pixel interval
/// (the range). A range may run backwards (`bottom...top` on a y axis is written as
/// `LinearScale(domain: 0...1, range: (bottom, top))`).
public struct LinearScale: Sendable, Hashable {
    public var domain: ClosedRange<Double>
    /// Pixel positions of the domain's lower and upper bound.
    public var range: (lower: Double, upper: Double)

    public init(domain: ClosedRange<Double>, range: (lower: Double, upper: Double)) {
        // An empty domain would divide by zero: widen it around its value.
        self.domain = domain.lowerBound < domain.upperBound
            ? domain : (domain.lowerBound - 0.5)...(domain.upperBound + 0.5)
        self.range = range
    }

    /// The pixel position of `value`.
    public func callAsFunction(_ value: Double) -> Double {
        let share = (value - domain.lowerBound) / (domain.upperBound - domain.lowerBound)
        return range.lower + share * (range.upper - range.lower)
    }

    /// About `count` round values inside the domain (steps of 1, 2 or 5 times a power of ten).
    public func ticks(count: Int = 6) -> [Double] {
        Ticks.nice(in: domain, count: count)
    }

    public static func == (a: LinearScale, b: LinearScale) -> Bool {
        a.domain == b.domain && a.range.lower == b.range.lower && a.range.upper == b.range.upper
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(domain)
        hasher.combine(range.lower)
        hasher.combine(range.upper)
    }
}

/// Round numbers for axes.
public enum Ticks {
    /// The step between about `count` ticks covering `domain`: 1, 2 or 5 times a power of ten.
    public static func step(for domain: ClosedRange<Double>, count: Int) -> Double {
        let span = domain.upperBound - domain.lowerBound
        guard span > 0, span.isFinite else { return 1 }
        let raw = span / Double(max(count, 1))
        let magnitude = pow(10, (log10(raw)).rounded(.down))
        let residual = raw / magnitude
        let factor: Double = residual < 1.5 ? 1 : residual < 3.5 ? 2 : residual < 7.5 ? 5 : 10
        return factor * magnitude
    }

    /// The multiples of ``step(for:count:)`` inside `domain`.
    public static func nice(in domain: ClosedRange<Double>, count: Int) -> [Double] {
        let step = step(for: domain, count: count)
        var value = (domain.lowerBound / step).rounded(.up) * step
        var values = [Double]()
        while value <= domain.upperBound + step * 1e-9, values.count < 1000 {
            values.append(abs(value) < step * 1e-9 ? 0 : value)
            value += step
        }
        return values
    }

    /// `domain` widened outwards to multiples of its tick step, so the axis starts and ends on a tick.
    public static func rounded(_ domain: ClosedRange<Double>, count: Int) -> ClosedRange<Double> {
        let step = step(for: domain, count: count)
        return ((domain.lowerBound / step).rounded(.down) * step)...((domain.upperBound / step).rounded(.up) * step)
    }

    /// A tick label: no decimals for a step of 1 or more, otherwise as many as the step needs.
    public static func label(_ value: Double, step: Double) -> String {
        let decimals = step >= 1 ? 0 : Int((-log10(step)).rounded(.up))
        return String(format: "%.\(decimals)f", value)
    }
}
