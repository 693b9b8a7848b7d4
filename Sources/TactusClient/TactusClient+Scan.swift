import TactusProtocol

extension TactusClient {
    /// Asks the server to scan its library roots (or `paths` below them) and waits for the
    /// summary for up to `wait` (a scan reads every new or changed file once).
    public func scan(_ request: ScanRequest, wait: Duration) throws(ClientError) -> ScanSummary {
        guard case .scan(let summary) = try send(.scan(request), timeout: max(timeout, wait)) else {
            throw .unexpectedReply(expected: ClientCommand.scan.rawValue, received: "another command")
        }
        return summary
    }

    /// Asks the server to remove the song bytes no job needs.
    public func prune(_ request: PruneRequest) throws(ClientError) -> PruneSummary {
        guard case .prune(let summary) = try send(.prune(request)) else {
            throw .unexpectedReply(expected: ClientCommand.prune.rawValue, received: "another command")
        }
        return summary
    }
}
