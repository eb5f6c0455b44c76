import Foundation

/// A network namespace of its own for Ableton Link peers (issue 17): only a loopback interface,
/// up, with multicast on and a route for 224.0.0.0/4. Link's multicast discovery then finds the
/// peers inside it and never reaches the host's interfaces. JACK servers are reached through
/// files in /dev/shm, which a network namespace does not separate.
///
/// Made by a holder process (`unshare --net`, as root; `unshare --map-current-user --net`
/// otherwise, where unprivileged user namespaces are allowed) and entered with `nsenter`; stopped
/// by the holder's PID in `stop()` (and deinit). `joined(address:peerAddress:)` makes a second
/// one with a veth pair between the two: two hosts on a network of their own (the OSC port's
/// reachability test, issue 35).
///
/// `@unchecked Sendable` by contract: the holder is started in init and only stopped after.
public final class LinkNamespace: @unchecked Sendable {
    private let holder = Process()
    private let asRoot = geteuid() == 0

    /// A new namespace; with `parent`, made from inside that one's (and its user namespace, when
    /// not root), so that the two can be joined.
    public init(inside parent: LinkNamespace? = nil) throws {
        try requireTestTool("/usr/bin/unshare", "Debian's util-linux")
        try requireTestTool("/usr/bin/nsenter", "Debian's util-linux")
        let out = Pipe(), err = Pipe()
        // The holder is named after this process, so that `scripts/clear-stale-jack.sh` can stop
        // one left behind by a test process that crashed.
        let unshare = URL(fileURLWithPath: "/usr/bin/unshare")
        let arguments = (asRoot || parent != nil ? ["--net"] : ["--map-current-user", "--net"]) + ["--", "/bin/bash", "-c", """
            PATH=/usr/sbin:/sbin:$PATH
            ip link set lo up && ip link set lo multicast on && ip route add 224.0.0.0/4 dev lo && echo ready && \
            exec -a sampler-link-namespace-holder-\(getpid()) sleep 100000
            """]
        (holder.executableURL, holder.arguments) = parent?.command(unshare, arguments) ?? (unshare, arguments)
        holder.standardOutput = out
        holder.standardError = err
        try holder.run()
        guard out.fileHandleForReading.readLineUnbuffered() == "ready" else {
            holder.waitUntilExit()
            let why = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            throw TestFailure("could not make a network namespace for the Link peers (unshare --net needs root, or unprivileged user namespaces): \(why)")
        }
    }

    deinit { stop() }

    public var pid: Int32 { holder.processIdentifier }

    /// `nsenter` and its arguments to run `executable arguments` inside the namespace (nsenter
    /// then execs it: the process is the program itself).
    public func command(_ executable: URL, _ arguments: [String]) -> (URL, [String]) {
        (URL(fileURLWithPath: "/usr/bin/nsenter"),
         ["--target", "\(pid)"] + (asRoot ? ["--net"] : ["--user", "--net", "--preserve-credentials"]) + ["--", executable.path] + arguments)
    }

    /// Runs `script` with bash inside the namespace (iproute2 on its PATH); throws with its
    /// output when it fails.
    public func shell(_ script: String) throws {
        let (tool, args) = command(URL(fileURLWithPath: "/bin/bash"), ["-c", "PATH=/usr/sbin:/sbin:$PATH; " + script])
        let result = try runTool(tool, args, timeout: 10)
        guard result.status == 0 else { throw TestFailure("in the namespace, \(script): \(result.stdout)\(result.stderr)") }
    }

    /// A second namespace joined to this one by a veth pair: this end `address`, the other
    /// `peerAddress` (CIDR: "10.77.0.1/24"). The caller stops it.
    public func joined(address: String, peerAddress: String) throws -> LinkNamespace {
        let peer = try LinkNamespace(inside: self)
        do {
            try shell("ip link add sveth0 type veth peer name sveth1 netns \(peer.pid) && ip addr add \(address) dev sveth0 && ip link set sveth0 up")
            try peer.shell("ip addr add \(peerAddress) dev sveth1 && ip link set sveth1 up")
        } catch {
            peer.stop()
            throw error
        }
        return peer
    }

    /// The interfaces inside the namespace (`ip -o link`), one name each.
    public func interfaces() throws -> [String] {
        let (tool, args) = command(URL(fileURLWithPath: FileManager.default.fileExists(atPath: "/usr/sbin/ip") ? "/usr/sbin/ip" : "/sbin/ip"),
                                   ["-o", "link"])
        let result = try runTool(tool, args, timeout: 10)
        return result.stdout.split(separator: "\n").compactMap { line in
            line.split(separator: ":").dropFirst().first.map { $0.trimmingCharacters(in: .whitespaces) }
        }
    }

    /// Stops the holder by its PID (the namespace goes when its last process does). Idempotent.
    /// SIGKILL: a child spawned from a thread that blocks SIGTERM (the test runner's may) inherits
    /// the block.
    public func stop() {
        if holder.isRunning {
            kill(holder.processIdentifier, SIGKILL)
            holder.waitUntilExit()
        }
    }
}
