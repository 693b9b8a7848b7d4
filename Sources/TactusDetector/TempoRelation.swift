/// How one tempo relates to another: equal, or an octave or triple apart, within a tolerance.
public enum TempoRelation {
    /// The MIREX tolerance: 4 %.
    public static let defaultTolerance = 0.04

    /// True when `estimate` is within `tolerance` (relative) of `reference`.
    public static func matches(_ estimate: Double, _ reference: Double, tolerance: Double = defaultTolerance) -> Bool {
        reference > 0 && abs(estimate - reference) <= tolerance * reference
    }

    /// The factor f in {1, 2, 1/2, 3, 1/3} such that `estimate` is within `tolerance` of
    /// `reference * f`, or nil. Factor 1 is preferred when several match.
    public static func factor(
        of estimate: Double, relativeTo reference: Double,
        factors: [Double] = [1, 2, 0.5, 3, 1.0 / 3.0], tolerance: Double = defaultTolerance
    ) -> Double? {
        factors.first { matches(estimate, reference * $0, tolerance: tolerance) }
    }

    /// Acc1: within 4 % of the reference.
    public static func acc1(_ estimate: Double?, _ reference: Double) -> Bool {
        estimate.map { matches($0, reference) } ?? false
    }

    /// Acc2: within 4 % of the reference times 1, 2, 1/2, 3 or 1/3.
    public static func acc2(_ estimate: Double?, _ reference: Double) -> Bool {
        estimate.flatMap { factor(of: $0, relativeTo: reference) } != nil
    }
}
