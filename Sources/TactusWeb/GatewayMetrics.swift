import Foundation
import Prometheus
import TactusProtocol

/// The gateway's Prometheus metrics (`/metrics`): the coordinator's queue and workers as
/// `status` gives them at each scrape, and, counted from the events since the gateway
/// started, jobs finished and failed and the analysis seconds of finished songs.
public final class GatewayMetrics: @unchecked Sendable {
    public let registry = PrometheusCollectorRegistry()
    private let lock = NSLock()
    /// The detectors whose gauges were set at the last scrape (their gauges are zeroed when
    /// they disappear, so a detector that lost its workers reads 0, not its last value).
    private var knownDetectors: Set<String> = []

    /// Analysis seconds buckets: from a tenth of a second to ten minutes.
    static let secondsBuckets: [Double] = [0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600]

    /// Every metric's help text (swift-prometheus requires the same text at each registration).
    static let help: [String: String] = [
        "tactus_up": "1 when the coordinator answered the gateway's last status request, else 0",
        "tactus_queue_jobs": "Jobs queued (waiting for a worker) per detector",
        "tactus_running_jobs": "Busy workers offering each detector (jobs being analysed per detector, for one-detector workers)",
        "tactus_workers": "Workers connected offering each detector (a worker offering several counts for each)",
        "tactus_jobs_per_second": "Jobs finished per second over the last minute",
        "tactus_uptime_seconds": "Seconds since the coordinator started",
        "tactus_accepting": "1 when the coordinator accepts submissions",
        "tactus_jobs_finished_total": "Jobs finished with a result, per detector, since the gateway started",
        "tactus_jobs_failed_total": "Jobs failed, per detector and error code, since the gateway started",
        "tactus_analysis_seconds": "Seconds each analysis took in its worker, per detector (songs finished since the gateway started)",
        "tactus_submissions_refused_total":
            "Uploads through the gateway refused, per reason (the coordinator's error code, or too-large at the gateway)",
    ]

    public init() {
        gauge("tactus_up").set(to: 0.0)
    }

    private func gauge(_ name: String, _ labels: [(String, String)] = []) -> Gauge {
        registry.makeGauge(name: name, labels: labels, help: Self.help[name] ?? "")
    }

    private func counter(_ name: String, _ labels: [(String, String)]) -> Counter {
        registry.makeCounter(name: name, labels: labels, help: Self.help[name] ?? "")
    }

    /// Sets the gauges from a `status` answer and the `detectors` answer (nil: the coordinator did not answer).
    public func update(status: ServerStatus?, detectors: DetectorsResponse?) {
        lock.lock()
        defer { lock.unlock() }
        gauge("tactus_up").set(to: status == nil ? 0.0 : 1.0)
        guard let status else { return }
        var queued: [String: Int] = status.queue
        var running: [String: Int] = [:]
        var workers: [String: Int] = [:]
        // A worker offering several detectors (protocol version 2) counts for each of them.
        for worker in status.workers {
            for detector in worker.offered {
                workers[detector, default: 0] += 1
                if worker.runningJobs > 0 { running[detector, default: 0] += 1 }
            }
        }
        for offered in detectors?.detectors ?? [] {
            queued[offered.detector.name, default: 0] += 0
            workers[offered.detector.name, default: 0] += 0
        }
        let names = Set(queued.keys).union(workers.keys).union(running.keys).union(knownDetectors)
        for name in names {
            gauge("tactus_queue_jobs", [("detector", name)]).set(Double(queued[name] ?? 0))
            gauge("tactus_running_jobs", [("detector", name)]).set(Double(running[name] ?? 0))
            gauge("tactus_workers", [("detector", name)]).set(Double(workers[name] ?? 0))
        }
        knownDetectors = names
        gauge("tactus_jobs_per_second").set(status.jobsPerSecond)
        gauge("tactus_uptime_seconds").set(status.uptimeS)
        gauge("tactus_accepting").set(to: status.accepting ? 1.0 : 0.0)
    }

    /// Counts an event.
    public func record(_ event: Event) {
        lock.lock()
        defer { lock.unlock() }
        switch event {
        case .jobDone(let done):
            counter("tactus_jobs_finished_total", [("detector", done.detector)]).increment()
        case .jobFailed(let failed):
            counter("tactus_jobs_failed_total", [("detector", failed.detector), ("code", failed.error.code.rawValue)]).increment()
        case .songDone, .workerJoined, .workerLost, .scanProgress:
            break
        }
    }

    /// Records the analysis time of one finished analysis.
    public func recordAnalysis(detector: String, seconds: Double) {
        lock.lock()
        defer { lock.unlock() }
        let name = "tactus_analysis_seconds"
        registry.makeValueHistogram(
            name: name, labels: [("detector", detector)], buckets: Self.secondsBuckets, help: Self.help[name] ?? ""
        ).record(seconds)
    }

    /// Counts an upload that was refused, by its error code.
    public func recordRefusal(code: String) {
        lock.lock()
        defer { lock.unlock() }
        counter("tactus_submissions_refused_total", [("reason", code)]).increment()
    }

    /// The metrics in Prometheus' text format.
    public func text() -> String {
        lock.lock()
        defer { lock.unlock() }
        return registry.emitToString()
    }
}
