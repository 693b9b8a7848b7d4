/// The detectors whose queued jobs no worker can take any more: a detector that the server
/// does not know (not built in) is accepted only while a connected worker offers it, and once
/// its last worker has been gone for ``grace`` its queued jobs are failed, rather than kept
/// queued for ever.
///
/// A plugin's worker that restarts, or a server restarted with a plugin's jobs still queued,
/// has the grace to come back; a worker that offered made-up detectors and left (anyone may
/// connect as a worker on loopback without CURVE) does not leave its jobs, and the songs
/// waiting on them, pending for good.
struct AbandonedDetectors {
    /// How long queued jobs wait for a worker of their detector to come back.
    let grace: Duration
    /// Since when each queued detector has been offered by no worker.
    private var unoffered: [String: ContinuousClock.Instant] = [:]

    init(grace: Duration) {
        self.grace = grace
    }

    /// The detectors among `queued` (those with queued jobs) that none of `available` (offered
    /// by a worker, or known to the server) has named for `grace` up to `now`. A detector
    /// that is available again, or has no queued job any more, starts over.
    mutating func due(queued: some Sequence<String>, available: Set<String>, at now: ContinuousClock.Instant) -> [String] {
        let waiting = Set(queued).subtracting(available)
        unoffered = unoffered.filter { waiting.contains($0.key) }
        var due: [String] = []
        for name in waiting.sorted() {
            let since = unoffered[name, default: now]
            unoffered[name] = since
            if now - since >= grace { due.append(name) }
        }
        return due
    }
}
