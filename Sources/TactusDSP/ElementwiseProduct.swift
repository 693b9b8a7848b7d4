/// `output[i] = a[i] * b[i]` for `i < count`, eight products at a time: the same products as
/// one at a time (a window applied to a frame, for example).
@inlinable
public func multiplyElementwise(
    _ a: UnsafePointer<Float>, _ b: UnsafePointer<Float>, into output: UnsafeMutablePointer<Float>, count: Int
) {
    let left = UnsafeRawPointer(a), right = UnsafeRawPointer(b), result = UnsafeMutableRawPointer(output)
    var index = 0
    while index + 8 <= count {
        let product = left.loadUnaligned(fromByteOffset: 4 * index, as: SIMD8<Float>.self)
            * right.loadUnaligned(fromByteOffset: 4 * index, as: SIMD8<Float>.self)
        result.storeBytes(of: product, toByteOffset: 4 * index, as: SIMD8<Float>.self)
        index += 8
    }
    while index < count {
        output[index] = a[index] * b[index]
        index += 1
    }
}
