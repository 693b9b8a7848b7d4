import Foundation
import TactusTestSupport

/// Hosts for the multi-host test on one Linux machine: network namespaces (each with its own
/// interfaces, addresses, routes and ports) joined by veth links, made with iproute2's `ip`.
///
/// Every namespace is named `tactus-mh-PID-HOST` after the test process, so ``tearDown()`` (also
/// run when the lab is released, and on SIGINT or SIGTERM before the process exits) and the
/// next lab (for a run that was killed) find and remove them, with every process still running
/// inside them.
///
/// ```swift
/// let lab = try NetworkLab(hosts: ["c", "a"])       // NetworkLab.Unavailable without root or veth
/// try lab.link("c", "to-a", "10.201.1.1", to: "a", "uplink", "10.201.1.2")
/// let (executable, arguments) = lab.command(in: "a", ["/bin/sleep", "1"])
/// try lab.setLink("c", "to-a", up: false)          // host a is cut off
/// ```
final class NetworkLab {
    /// Why this machine cannot make namespaces or veth links (not root, no `ip`, no kernel support).
    struct Unavailable: Error, CustomStringConvertible {
        let description: String
    }

    /// The start of every namespace name this type makes.
    static let prefix = "tactus-mh-"

    /// The namespaces made, by host name.
    private(set) var namespaces: [String: String] = [:]
    private let tag = "\(NetworkLab.prefix)\(getpid())"
    /// Until ``tearDown()``: an interrupted test removes the namespaces, then exits.
    private var signalSources: [any DispatchSourceSignal] = []

    /// Makes one namespace per host, each with its loopback up, after removing the leftovers
    /// of runs whose process is gone.
    init(hosts: [String]) throws {
        Self.removeLeftovers()
        for host in hosts {
            let name = "\(tag)-\(host)"
            do {
                try Self.ip(["netns", "add", name])
            } catch {
                throw Unavailable(description: "cannot create a network namespace (uid \(geteuid())): \(error)")
            }
            namespaces[host] = name
            try Self.ip(["-n", name, "link", "set", "lo", "up"])
        }
        let names = Array(namespaces.values)
        signalSources = [SIGINT, SIGTERM].map { number in
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler {
                for name in names { Self.remove(name) }
                exit(128 + number)
            }
            source.resume()
            return source
        }
    }

    deinit {
        tearDown()
    }

    /// The namespace of `host`.
    func namespace(_ host: String) -> String {
        namespaces[host] ?? "\(tag)-\(host)"
    }

    /// Joins two hosts with a veth pair in a /30: `device` on `host` gets `address`, and
    /// `peerDevice` on `peer` gets `peerAddress`; both ends come up.
    func link(_ host: String, _ device: String, _ address: String, to peer: String, _ peerDevice: String, _ peerAddress: String) throws {
        do {
            try Self.ip(["-n", namespace(host), "link", "add", device, "type", "veth", "peer", "name", peerDevice, "netns", namespace(peer)])
        } catch {
            throw Unavailable(description: "cannot create a veth link: \(error)")
        }
        try Self.ip(["-n", namespace(host), "address", "add", "\(address)/30", "dev", device])
        try Self.ip(["-n", namespace(peer), "address", "add", "\(peerAddress)/30", "dev", peerDevice])
        try setLink(host, device, up: true)
        try setLink(peer, peerDevice, up: true)
    }

    /// Brings `device` of `host` up or down (down: its cable is pulled; the peer loses carrier).
    func setLink(_ host: String, _ device: String, up: Bool) throws {
        try Self.ip(["-n", namespace(host), "link", "set", device, up ? "up" : "down"])
    }

    /// The executable and arguments that run `arguments` inside `host`'s namespace (`ip netns
    /// exec` execs the program, so the process started is the program itself).
    func command(in host: String, _ arguments: [String]) -> (executable: String, arguments: [String]) {
        ("/usr/bin/env", ["ip", "netns", "exec", namespace(host)] + arguments)
    }

    /// Kills every process left in the lab's namespaces and deletes them. Idempotent.
    func tearDown() {
        for name in namespaces.values { Self.remove(name) }
        namespaces = [:]
        for source in signalSources { source.cancel() }
        if !signalSources.isEmpty {
            signal(SIGINT, SIG_DFL)
            signal(SIGTERM, SIG_DFL)
        }
        signalSources = []
    }

    /// The names of the namespaces that exist on the machine.
    static func existing() -> [String] {
        ((try? ip(["netns", "list"])) ?? "").split(separator: "\n").compactMap { $0.split(separator: " ").first.map(String.init) }
    }

    /// Removes the namespaces of earlier labs whose test process is gone.
    private static func removeLeftovers() {
        for name in existing() where name.hasPrefix(prefix) {
            let owner = name.dropFirst(prefix.count).prefix { $0.isNumber }
            guard let pid = Int32(owner), kill(pid, 0) != 0 || pid == getpid() else { continue }
            remove(name)
        }
    }

    private static func remove(_ name: String) {
        let pids = ((try? ip(["netns", "pids", name])) ?? "").split(separator: "\n").compactMap { Int32($0) }
        for pid in pids { kill(pid, SIGKILL) }
        _ = try? ip(["netns", "delete", name])
    }

    /// Runs `ip ARGUMENTS`; returns its standard output, or throws with its standard error.
    @discardableResult
    static func ip(_ arguments: [String]) throws -> String {
        let run = try CLI.runProgram("/usr/bin/env", ["ip"] + arguments)
        guard run.status == 0 else {
            let error = run.standardError.trimmingCharacters(in: .whitespacesAndNewlines)
            throw ServerTestError("`ip \(arguments.joined(separator: " "))` failed (status \(run.status)): \(error)")
        }
        return run.standardOutput
    }
}
