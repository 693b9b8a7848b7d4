import Hummingbird
import Logging
import NIOCore

/// The context of every request to the gateway: Hummingbird's core context, and the address of
/// the client's end of the connection (what ``TokenGuesses`` counts wrong tokens by).
public struct GatewayContext: RequestContext, RemoteAddressRequestContext {
    public var coreContext: CoreRequestContextStorage
    /// The peer of the connection; `nil` where the channel has none (a test channel).
    public let remoteAddress: SocketAddress?

    public init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        remoteAddress = source.channel.remoteAddress
    }
}
