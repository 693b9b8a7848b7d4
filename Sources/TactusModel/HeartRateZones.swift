/// Music tempi for heart-rate zones: what `tactus playlist --follow WORKOUT --by heart-rate`
/// plays, each window of a workout at the tempo of its heart rate's zone.
///
/// The zones are the five of percentages of the maximum heart rate (below 60 %, 60-70, 70-80,
/// 80-90, 90 % and more). The default tempi follow C. I. Karageorghis et al.'s studies of the
/// music tempo people prefer as their exercise heart rate rises (Research Quarterly for Exercise
/// and Sport 77(2), 2006, and 82(2), 2011; the review of C. I. Karageorghis and D.-L. Priest,
/// International Review of Sport and Exercise Psychology 5(1), 2012): the preferred tempo rises
/// with the heart rate but levels off, most exercisers preferring about 120-140 beats per minute
/// at moderate to high intensity; slower music below. See docs/CADENCE.md.
public struct HeartRateZones: Sendable, Hashable {
    /// The lower bounds of zones 2-5, as fractions of the maximum heart rate.
    public static let bounds: [Double] = [0.6, 0.7, 0.8, 0.9]
    /// The default tempo of each of the five zones, in beats per minute.
    public static let defaultTempi: [Double] = [105, 120, 128, 135, 140]

    /// The tempo of each zone, lowest first.
    public var tempi: [Double]
    /// The maximum heart rate; nil: the workout's highest window heart rate.
    public var maximumHeartRate: Double?

    public init(tempi: [Double] = Self.defaultTempi, maximumHeartRate: Double? = nil) {
        precondition(tempi.count == Self.bounds.count + 1)
        self.tempi = tempi
        self.maximumHeartRate = maximumHeartRate
    }

    /// The zone (0-4) of `heartRate` for a maximum of `maximum`.
    public static func zone(of heartRate: Double, maximum: Double) -> Int {
        bounds.count { heartRate >= $0 * maximum }
    }

    /// `report` with each window's cadence replaced by the tempo of its heart rate's zone
    /// (windows without a heart rate have none), for ``CadenceReport/steadyStretches(tolerance:minimumSeconds:)``;
    /// nil when no window has a heart rate.
    public func tempoReport(_ report: CadenceReport) -> CadenceReport? {
        guard let highest = report.windows.compactMap(\.heartRate).max() else { return nil }
        let maximum = maximumHeartRate ?? highest
        var tempo = report
        tempo.windows = report.windows.map { window in
            var window = window
            if let rate = window.heartRate {
                window.status = .steps
                window.cadence = tempi[Self.zone(of: rate, maximum: maximum)]
            } else {
                window.status = .still
                window.cadence = nil
            }
            return window
        }
        return tempo
    }
}
