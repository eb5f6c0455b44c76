import Foundation

/// JACK's network transport (netjack2) on one machine: a master server (`jackd -d dummy` with
/// the `netmanager` internal client) in a network namespace of its own, and a slave server
/// (`jackd -d net`) in a second one joined to it by a veth pair, multicast routed over the pair
/// on both ends. Nothing reaches the host's network. Once up, the master has the client
/// `netClient` with ports `netClient:from_slave_N` (what the slave's `system:playback_N`
/// receive) and `netClient:to_slave_N`.
///
/// Both servers are stopped by their own PIDs, then the namespaces' holders (`stop()`, and
/// deinit as a fallback). Where network namespaces cannot be made (no root and no unprivileged
/// user namespaces), init throws saying so.
///
/// The master is asynchronous by default: a synchronous master (`jackd -S`) waits for the net
/// client each cycle, and after a stall of the slave its graph stays broken (JACK2 prints
/// "ProcessWriteSlaves error" every cycle and the slave's audio never returns).
///
/// `@unchecked Sendable` by contract: everything is set in init and only stopped after.
public final class NetJackRig: @unchecked Sendable {
    public let masterSpace: LinkNamespace
    public let slaveSpace: LinkNamespace
    public let master: JACKServer
    public let slave: JACKServer
    /// The master's client for the slave.
    public let netClient = "netslave"

    /// `slaveMIDIInputs`: MIDI ports from the master to the slave (the slave's
    /// `system:midi_capture_N`; 0: as many as the master has physical ones, none on a dummy).
    public init(period: Int = 256, sampleRate: Int = 48000, masterSynchronous: Bool = false, slaveMIDIInputs: Int = 0) throws {
        try requireTestTool("/usr/bin/jack_load", "Debian's jackd2")
        try requireTestTool("/usr/bin/jack_lsp", "Debian's jackd2")
        masterSpace = try LinkNamespace()
        do {
            slaveSpace = try masterSpace.joined(address: "10.78.0.1/24", peerAddress: "10.78.0.2/24")
        } catch {
            masterSpace.stop()
            throw error
        }
        // Multicast (netjack2's discovery and its audio) goes over the pair, not loopback.
        let multicast = "ip link set %@ multicast on && ip route replace 224.0.0.0/4 dev %@"
        let address = "225.3.19.154", port = "19000"
        let id = "\(getpid())-\(NetJackRig.counter.next())"
        var started: [JACKServer] = []
        do {
            try masterSpace.shell(String(format: multicast, "sveth0", "sveth0"))
            try slaveSpace.shell(String(format: multicast, "sveth1", "sveth1"))
            let masterName = "sampler-netmaster-\(id)"
            master = try JACKServer(name: masterName,
                                    arguments: (masterSynchronous ? ["-S"] : []) + ["-n", masterName, "-d", "dummy", "-r", "\(sampleRate)", "-p", "\(period)"],
                                    period: period, sampleRate: sampleRate, synchronous: masterSynchronous, launch: masterSpace.command)
            started.append(master)
            let load = try runTool(URL(fileURLWithPath: "/usr/bin/jack_load"), ["netmanager", "-i", "-a \(address) -p \(port)"],
                                   environment: ["JACK_DEFAULT_SERVER": masterName], timeout: 10)
            guard load.status == 0 else { throw TestFailure("jack_load netmanager failed: \(load.stdout)\(load.stderr)") }
            let slaveName = "sampler-netslave-\(id)"
            slave = try JACKServer(name: slaveName, arguments: ["-n", slaveName, "-d", "net", "-a", address, "-p", port, "-n", netClient]
                                       + (slaveMIDIInputs > 0 ? ["-i", "\(slaveMIDIInputs)"] : []),
                                   period: period, sampleRate: sampleRate, synchronous: false, launch: slaveSpace.command)
            started.append(slave)
            let client = netClient
            guard waitUntil(timeout: 15, {
                let ports = try? runTool(URL(fileURLWithPath: "/usr/bin/jack_lsp"), [], environment: ["JACK_DEFAULT_SERVER": masterName], timeout: 5)
                return ports?.stdout.contains("\(client):from_slave_1") == true
            }) else { throw TestFailure("the net slave did not join the master within 15 s") }
        } catch {
            started.reversed().forEach { $0.stop() }
            slaveSpace.stop()
            masterSpace.stop()
            throw error
        }
    }

    private static let counter = LockedCounter()

    /// The ports of `server` (`jack_lsp`), one per element.
    public func ports(of server: JACKServer) -> [String] {
        let listed = try? runTool(URL(fileURLWithPath: "/usr/bin/jack_lsp"), [], environment: ["JACK_DEFAULT_SERVER": server.name], timeout: 5)
        return listed?.stdout.split(separator: "\n").map(String.init) ?? []
    }

    /// Connects `from` to `to` on `server` (`jack_connect`).
    public func connect(_ from: String, _ to: String, on server: JACKServer) throws {
        let r = try runTool(URL(fileURLWithPath: "/usr/bin/jack_connect"), [from, to], environment: ["JACK_DEFAULT_SERVER": server.name], timeout: 5)
        guard r.status == 0 else { throw TestFailure("jack_connect \(from) \(to): \(r.stdout)\(r.stderr)") }
    }

    /// Stops the slave, the master, then the namespaces. Idempotent.
    public func stop() {
        slave.stop()
        master.stop()
        slaveSpace.stop()
        masterSpace.stop()
    }

    deinit { stop() }
}
