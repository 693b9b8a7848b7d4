import TactusProtocol

extension TactusClient {
    /// Asks the server to scan its library roots (or `paths` below them) and waits for the
    /// summary for up to `wait` (a scan reads every new or changed file once).
    public func scan(_ request: ScanRequest, wait: Duration) throws(ClientError) -> ScanSummary {
        try send(ScanCommand.self, request, timeout: max(timeout, wait))
    }

    /// Asks the server to remove the song bytes no job needs.
    public func prune(_ request: PruneRequest) throws(ClientError) -> PruneSummary {
        try send(PruneCommand.self, request)
    }
}
