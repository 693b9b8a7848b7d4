/// Music tempi for heart-rate zones: what `tactus playlist --follow WORKOUT --by heart-rate`
/// plays, each window of a workout at the tempo of its heart rate's zone.
///
/// The zones are the five of percentages of the maximum heart rate that watches use (below
/// 60 %, 60-70, 70-80, 80-90, 90 % and more). The default tempi follow the studies of exercise
/// heart rate and preferred music tempo of C. I. Karageorghis and colleagues, which measured
/// intensity in percent of the maximal heart-rate reserve, 40-90 % (about 60-95 % of the
/// maximum heart rate; zones 2-5 here): slow music (95-100 BPM) was preferred at no intensity,
/// medium (115-120) and fast (135-140) at low and moderate intensity, fast at high intensity
/// (treadmill walking: Research Quarterly for Exercise and Sport 77(2), 2006; cycling, 82(2),
/// 2011); on a treadmill the preferred tempi lay between 123 and 131 BPM (Psychology of Sport
/// and Exercise 15(3), 2014). Zones 2-5 take 123-131 BPM; zone 1, below the intensities
/// studied, the top of the medium band. See docs/CADENCE.md.
public struct HeartRateZones: Sendable, Hashable {
    /// The lower bounds of zones 2-5, as fractions of the maximum heart rate.
    public static let bounds: [Double] = [0.6, 0.7, 0.8, 0.9]
    /// The default tempo of each of the five zones, in beats per minute.
    public static let defaultTempi: [Double] = [120, 123, 126, 129, 131]

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
