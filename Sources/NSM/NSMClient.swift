import Foundation
import Glibc
import Sync

/// Why the session manager could not be joined: one line naming NSM_URL or the server's answer.
package struct NSMError: Error, Equatable, Sendable, CustomStringConvertible {
    package let description: String
    package init(_ description: String) { self.description = description }
}

/// A client of a New Session Manager server (API 1.1) over OSC: it announces itself to the
/// server at `NSM_URL`, then takes the server's messages and answers them.
///
/// It listens on a UDP socket of its own (an `OSCServer`, on loopback when the server is on this
/// machine, as it is in every session manager's normal use) and takes only what comes from the
/// server's port: a message from anywhere else is dropped. Replies go to the server's URL.
///
/// Control thread only (`OSCServer`'s receiving thread only queues messages).
package final class NSMClient {
    /// The server's URL, from NSM_URL.
    package let url: String
    /// The URL messages go to: NSM_URL's host resolved once, when the client starts.
    private let sendURL: String
    private let server: OSCServer
    private let serverPort: UInt16
    /// The server's numeric addresses, and whether it is on this machine (then any loopback
    /// address of that port is it: a URL naming the host may resolve to 127.0.1.1 while replies
    /// come from 127.0.0.1).
    private let serverHosts: Set<String>
    private let serverIsLocal: Bool
    /// What was last reported with is_dirty/is_clean (nil: nothing yet, which is clean).
    private var reportedDirty = false

    /// Opens the client's socket for the server at `url` (NSM_URL: "osc.udp://host:port/").
    package init(url: String) throws(NSMError) {
        guard let (host, port) = OSCServer.udpEndpoint(url), let number = UInt16(port) else {
            throw NSMError("NSM_URL must be an OSC UDP address such as osc.udp://localhost:12345/, got \"\(url)\"")
        }
        let addresses = Self.resolve(host: host, port: port)
        guard !addresses.isEmpty else { throw NSMError("NSM_URL \(url): cannot resolve the host \"\(host)\"") }
        self.url = url
        serverPort = number
        serverHosts = Set(addresses)
        // On this machine when every address is loopback or one of this machine's own (a URL
        // naming the host name may resolve to a LAN address): the client then listens on
        // loopback only.
        let own = Self.ownAddresses()
        let isLocal = addresses.allSatisfy { Self.isLoopback($0) || own.contains($0) }
        serverIsLocal = isLocal
        let first = addresses.sorted()[0]
        sendURL = "osc.udp://\(first.contains(":") ? "[\(first)]" : first):\(port)/"
        // Only the server's datagrams are queued: a flood from anywhere else is dropped on the
        // receiving thread and never delays the server's messages.
        let hosts = Set(addresses)
        do {
            server = try OSCServer(host: isLocal ? "127.0.0.1" : "0.0.0.0", port: "0",
                                   hostNow: { DispatchTime.now().uptimeNanoseconds / 1000 },
                                   accepts: { Self.isServer($0, port: number, hosts: hosts, local: isLocal) }, onlyPort: number)
        } catch {
            throw NSMError("NSM_URL \(url): \(error)")
        }
    }

    deinit { server.close() }

    /// The UDP port the client listens on.
    package var port: Int { server.port }

    /// Announces the client (`/nsm/server/announce`). Returns false when it could not be sent.
    @discardableResult
    package func announce(applicationName: String, capabilities: [String], executable: String, pid: Int32) -> Bool {
        let (path, arguments) = NSMProtocol.announce(applicationName: applicationName, capabilities: capabilities,
                                                     executable: executable, pid: pid)
        return server.send(path, arguments, to: sendURL)
    }

    /// The server's messages received since the last call, in order. Messages from any other
    /// sender are dropped.
    package func take() -> [NSMEvent] {
        server.take().filter { isFromServer($0.source) }.map(NSMProtocol.event)
    }

    /// `/reply path message`.
    package func reply(to path: String, _ message: String) {
        let (p, a) = NSMProtocol.reply(to: path, message)
        server.send(p, a, to: sendURL)
    }

    /// `/error path code message`.
    package func error(to path: String, code: NSMProtocol.Code, _ message: String) {
        let (p, a) = NSMProtocol.error(to: path, code: code, message)
        server.send(p, a, to: sendURL)
    }

    /// Tells the server whether there are unsaved changes, when that differs from what it was
    /// told last (a client starts clean).
    package func report(dirty: Bool) {
        guard dirty != reportedDirty else { return }
        reportedDirty = dirty
        let (p, a) = NSMProtocol.dirty(dirty)
        server.send(p, a, to: sendURL)
    }

    /// Whether `source` ("osc.udp://127.0.0.1:PORT/", as `OSCServer` names senders) is the server.
    private func isFromServer(_ source: String) -> Bool {
        Self.isServer(source, port: serverPort, hosts: serverHosts, local: serverIsLocal)
    }

    private static func isServer(_ source: String, port serverPort: UInt16, hosts: Set<String>, local: Bool) -> Bool {
        guard let (host, port) = OSCServer.udpEndpoint(source), UInt16(port) == serverPort else { return false }
        return hosts.contains(host) || (local && isLoopback(host))
    }

    private static func isLoopback(_ host: String) -> Bool {
        host.hasPrefix("127.") || host == "::1" || host.hasPrefix("::ffff:127.")
    }

    /// The numeric addresses of this machine's network interfaces.
    private static func ownAddresses() -> Set<String> {
        var list: UnsafeMutablePointer<ifaddrs>?
        guard getifaddrs(&list) == 0 else { return [] }
        defer { freeifaddrs(list) }
        var found: Set<String> = []
        var entry = list
        while let e = entry {
            if let address = e.pointee.ifa_addr {
                let family = Int32(address.pointee.sa_family)
                let length = socklen_t(family == AF_INET6 ? MemoryLayout<sockaddr_in6>.size : MemoryLayout<sockaddr_in>.size)
                var text = [CChar](repeating: 0, count: Int(NI_MAXHOST))
                if family == AF_INET || family == AF_INET6,
                   getnameinfo(address, length, &text, socklen_t(text.count), nil, 0, NI_NUMERICHOST) == 0 {
                    found.insert(String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
                }
            }
            entry = e.pointee.ifa_next
        }
        return found
    }

    /// The numeric addresses `host` resolves to for UDP.
    private static func resolve(host: String, port: String) -> [String] {
        var hints = addrinfo()
        hints.ai_flags = AI_NUMERICSERV
        hints.ai_socktype = Int32(SOCK_DGRAM.rawValue)
        var found: UnsafeMutablePointer<addrinfo>?
        guard getaddrinfo(host, port, &hints, &found) == 0 else { return [] }
        defer { freeaddrinfo(found) }
        var addresses: [String] = []
        var entry = found
        while let e = entry {
            var text = [CChar](repeating: 0, count: Int(NI_MAXHOST))
            if getnameinfo(e.pointee.ai_addr, e.pointee.ai_addrlen, &text, socklen_t(text.count), nil, 0, NI_NUMERICHOST) == 0 {
                addresses.append(String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
            }
            entry = e.pointee.ai_next
        }
        return addresses
    }
}
