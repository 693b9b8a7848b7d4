/// Peak picking on sampled curves (autocorrelations, comb energies, histograms).
public enum Peaks {
    /// A local maximum: its index, its refined position and its interpolated height.
    public struct Peak: Sendable, Hashable {
        public var index: Int
        /// The index refined by parabolic interpolation, in [index - 0.5, index + 0.5].
        public var position: Double
        public var value: Double
    }

    /// The vertex of the parabola through (-1, left), (0, centre), (1, right): the offset
    /// from the centre sample and the height there.
    public static func parabolicVertex(left: Double, centre: Double, right: Double) -> (offset: Double, value: Double) {
        let denominator = left - 2 * centre + right
        guard denominator < 0 else { return (0, centre) }
        let offset = min(max(0.5 * (left - right) / denominator, -0.5), 0.5)
        return (offset, centre - 0.25 * (left - right) * offset)
    }

    /// Local maxima of `values` within `range` (strictly greater than the left neighbour,
    /// at least the right one), strongest first, at most `limit`.
    public static func find(in values: [Float], range: ClosedRange<Int>, limit: Int = .max) -> [Peak] {
        let lower = max(range.lowerBound, 1)
        let upper = min(range.upperBound, values.count - 2)
        guard lower <= upper else { return [] }
        var peaks: [Peak] = []
        for index in lower...upper where values[index] > values[index - 1] && values[index] >= values[index + 1] {
            let vertex = parabolicVertex(
                left: Double(values[index - 1]), centre: Double(values[index]), right: Double(values[index + 1]))
            peaks.append(Peak(index: index, position: Double(index) + vertex.offset, value: vertex.value))
        }
        peaks.sort { $0.value > $1.value }
        return Array(peaks.prefix(limit))
    }
}
