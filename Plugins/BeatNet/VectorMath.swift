/// exp, the logistic sigmoid and tanh of eight floats at once, for the LSTM's gates.
///
/// exp is Cephes' `expf` method: x = n ln 2 + r with |r| <= ln 2 / 2 (ln 2 split in two parts
/// so r is exact), e^r by its degree-6 Taylor polynomial (relative error below 2e-7), and 2^n
/// put in the exponent bits. Inputs are clamped to [-87, 87], where e^x is a normal float; the
/// sigmoid and tanh saturate long before. Relative to libm the results differ by a few 1e-7,
/// far inside the port's 1e-4 (``BeatNetReferenceTests``).
enum VectorMath {
    @inline(__always)
    static func exp(_ x: SIMD8<Float>) -> SIMD8<Float> {
        // Selections rather than pointwiseMin and pointwiseMax, which the compiler leaves as
        // calls in the LSTM's loop.
        var clamped = x
        clamped.replace(with: -87, where: x .< -87)
        clamped.replace(with: 87, where: x .> 87)
        // n = round(x / ln 2) without a float-to-integer conversion (which Swift's SIMD does
        // one lane at a time): adding 1.5 * 2^23 leaves n in the low bits of the float.
        let magic = SIMD8<Float>(repeating: 12_582_912)
        let shifted = clamped * 1.442_695_04 + magic
        let n = shifted - magic
        let r = clamped - n * 0.693_359_375 + n * 2.121_944_4e-4
        var p = SIMD8<Float>(repeating: 1.0 / 720)
        p = p * r + 1.0 / 120
        p = p * r + 1.0 / 24
        p = p * r + 1.0 / 6
        p = p * r + 0.5
        p = p * r + 1
        p = p * r + 1
        let bits = unsafeBitCast(shifted, to: SIMD8<Int32>.self) &- 0x4B40_0000
        return p * unsafeBitCast((bits &+ 127) &<< 23, to: SIMD8<Float>.self)
    }

    @inline(__always)
    static func sigmoid(_ x: SIMD8<Float>) -> SIMD8<Float> { 1 / (1 + exp(-x)) }

    /// 2 sigmoid(2x) - 1.
    @inline(__always)
    static func tanh(_ x: SIMD8<Float>) -> SIMD8<Float> { 2 / (1 + exp(-2 * x)) - 1 }
}
