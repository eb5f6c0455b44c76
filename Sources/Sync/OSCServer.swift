import CLiblo
import Foundation
import Glibc
import Locking

/// Why an OSC server could not start.
package struct OSCError: Error, CustomStringConvertible, Sendable {
    package var description: String
    package init(_ description: String) { self.description = description }
}

/// Receives OSC messages over UDP on one address and port, and keeps them for a control thread to
/// take; sends replies from the same socket (as klick does, so a client sees them come from the
/// address it sends to).
///
/// It listens on 127.0.0.1 unless told otherwise: a message can start, stop and load what the
/// command line could, so opening it to a network is the user's choice (`--osc-host`). The socket
/// is the server's own (liblo 0.31 binds every interface and cannot be told one address); each
/// datagram is handed to `OSCPacket`, which walks bundles and lets liblo parse the messages.
///
/// A bundle's messages are handed over as soon as they arrive, each with its timetag converted to
/// host time on the device's clock (`hostNow`), and the program schedules them on their exact
/// frame. At most `maximumQueued` messages wait to be taken; more are dropped and counted.
///
/// Threads: `take`, `send` and `close` from any control thread; the receiving thread only parses,
/// converts and queues.
///
/// `@unchecked Sendable` by contract: `sockets`, `port` and `host` are set in `init` before the
/// receiving thread starts and never change; the queue and counters are `Locked`; the receiving
/// thread touches the sockets only with `poll`/`recvfrom`, the control side only with `sendto`
/// and `getsockname` (each safe beside the others), and `close` closes the sockets after the
/// thread has ended.
package final class OSCServer: @unchecked Sendable {
    /// The UDP port it listens on.
    package let port: Int
    /// The address it listens on ("127.0.0.1" unless asked otherwise).
    package let host: String
    /// The most messages kept for the control thread between two `take`s.
    package static let maximumQueued = 1024

    /// The bound sockets: one, or IPv4's and IPv6's loopback for the default host.
    private let sockets: [Int32]
    /// What the receiving thread shares with the control side. The thread holds this, not the
    /// server, so a server its owner lets go of is closed by its deinit.
    private let inbox: Inbox
    private let closed = Locked(false)
    private let finished = DispatchSemaphore(value: 0)

    /// `@unchecked Sendable` by contract: `hostNow` and `accepts` are fixed; `queue` and
    /// `droppedCount` are `Locked`.
    private final class Inbox: @unchecked Sendable {
        let hostNow: @Sendable () -> UInt64
        let accepts: (@Sendable (String) -> Bool)?
        let onlyPort: UInt16?
        let queue = Locked<[OSCMessage]>([])
        let droppedCount = Locked(0)
        init(hostNow: @escaping @Sendable () -> UInt64, accepts: (@Sendable (String) -> Bool)?, onlyPort: UInt16?) {
            self.hostNow = hostNow
            self.accepts = accepts
            self.onlyPort = onlyPort
        }
    }

    /// Listens on UDP `port` ("0" or nil: a free port, see `port`) at `host` (an IPv4 or IPv6
    /// address; "0.0.0.0" or "::" for every interface). `hostNow` reads the device's host clock in
    /// microseconds (JACK's `jack_get_time`). Control thread.
    ///
    /// `accepts`, when given, decides on the receiving thread which senders' datagrams are kept
    /// (by their source, "osc.udp://HOST:PORT/"): the others are dropped and counted before they
    /// are parsed or queued, so that a flood from elsewhere never crowds out the one sender a
    /// client listens to (NSM's server).
    /// `onlyPort`, when given, drops every datagram from another source port first, before its
    /// address is even formatted (the cheapest test, for a flood).
    package init(host: String = "127.0.0.1", port: String?, hostNow: @escaping @Sendable () -> UInt64,
                 accepts: (@Sendable (String) -> Bool)? = nil, onlyPort: UInt16? = nil) throws(OSCError) {
        let requested = port ?? "0"
        let first = try Self.bind(host: host, port: requested)
        var sockets = [first.socket]
        // "127.0.0.1" means this machine: IPv6's loopback too (where "localhost" may resolve to
        // ::1 first), on the same port, when the machine has it.
        if host == "127.0.0.1", let six = try? Self.bind(host: "::1", port: String(first.port)) { sockets.append(six.socket) }
        // Datagrams from another port are dropped by the kernel, before they reach the socket's
        // buffer: a flood from elsewhere cannot fill it and push the one sender out.
        if let onlyPort { for socket in sockets { Self.attachPortFilter(socket, port: onlyPort) } }
        self.sockets = sockets
        self.host = host
        self.port = Int(first.port)
        inbox = Inbox(hostNow: hostNow, accepts: accepts, onlyPort: onlyPort)
        let thread = Thread { [sockets, inbox, closed, finished] in
            Self.receiveLoop(sockets: sockets, inbox: inbox, closed: closed)
            finished.signal()
        }
        thread.name = "sampler.osc"
        thread.start()
    }

    /// A UDP socket bound to `host`:`port`, and the port it got.
    private static func bind(host: String, port: String) throws(OSCError) -> (socket: Int32, port: UInt16) {
        var hints = addrinfo()
        hints.ai_flags = AI_NUMERICHOST | AI_NUMERICSERV | AI_PASSIVE
        hints.ai_socktype = Int32(SOCK_DGRAM.rawValue)
        var found: UnsafeMutablePointer<addrinfo>?
        guard getaddrinfo(host, port, &hints, &found) == 0, let info = found else {
            throw OSCError("cannot listen for OSC on \(host) port \(port) (not a numeric address and port)")
        }
        defer { freeaddrinfo(found) }
        let fd = Glibc.socket(info.pointee.ai_family, info.pointee.ai_socktype | Int32(SOCK_CLOEXEC.rawValue), info.pointee.ai_protocol)
        guard fd >= 0 else { throw OSCError("cannot open a UDP socket for OSC (\(String(cString: strerror(errno))))") }
        if info.pointee.ai_family == AF_INET6 {
            // An IPv6 address means that address only, not IPv4 as well.
            var on: Int32 = 1
            setsockopt(fd, Int32(IPPROTO_IPV6), IPV6_V6ONLY, &on, socklen_t(MemoryLayout<Int32>.size))
        }
        guard Glibc.bind(fd, info.pointee.ai_addr, info.pointee.ai_addrlen) == 0 else {
            let reason = String(cString: strerror(errno))
            Glibc.close(fd)
            throw OSCError("cannot listen for OSC on UDP \(host) port \(port) (\(reason.lowercased()))")
        }
        var bound = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        _ = withUnsafeMutablePointer(to: &bound) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        return (fd, endpoint(of: bound)?.port ?? 0)
    }

    deinit { close() }

    /// Stops the receiving thread (within 100 ms) and closes the sockets. Idempotent; waits outside
    /// any lock.
    package func close() {
        let wasOpen = closed.withLock { c in
            defer { c = true }
            return !c
        }
        guard wasOpen else { return }
        finished.wait()
        for socket in sockets { Glibc.close(socket) }
    }

    /// The device's host clock this server converts timetags with (microseconds). Any thread.
    package var hostClock: @Sendable () -> UInt64 { inbox.hostNow }

    /// The messages received since the previous call, in order.
    package func take() -> [OSCMessage] {
        inbox.queue.withLock { q in
            defer { q = [] }
            return q
        }
    }

    /// Messages dropped since the previous call: the queue was full, or a packet was malformed.
    package func takeDroppedCount() -> Int {
        inbox.droppedCount.withLock { d in
            defer { d = 0 }
            return d
        }
    }

    /// Sends a plain message to `url` ("osc.udp://host:port/", the host numeric: a name is never
    /// looked up here, where a slow resolver would stall the control thread) from this server's
    /// socket. Returns false when the address is not valid or the send failed.
    @discardableResult
    package func send(_ path: String, _ arguments: [OSCArgument], to url: String) -> Bool {
        // The URL is read here, not by liblo: lo_address_new_from_url reads past the end of a
        // malformed one (found by the OSC fuzz target), and a reply address comes from a message.
        guard closed.withLock({ !$0 }), let (hostName, service) = Self.udpEndpoint(url) else { return false }
        let message = lo_message_new()
        defer { lo_message_free(message) }
        for argument in arguments {
            switch argument {
            case .int(let v): lo_message_add_int32(message, v)
            case .int64(let v): lo_message_add_int64(message, v)
            case .float(let v): lo_message_add_float(message, v)
            case .double(let v): lo_message_add_double(message, v)
            case .string(let s): lo_message_add_string(message, s)
            case .other: continue
            }
        }
        var size = 0
        guard let bytes = lo_message_serialise(message, path, nil, &size) else { return false }
        defer { free(bytes) }
        var hints = addrinfo()
        hints.ai_flags = AI_NUMERICHOST | AI_NUMERICSERV
        hints.ai_socktype = Int32(SOCK_DGRAM.rawValue)
        var found: UnsafeMutablePointer<addrinfo>?
        guard getaddrinfo(hostName, service, &hints, &found) == 0 else { return false }
        defer { freeaddrinfo(found) }
        var entry = found
        while let e = entry {
            // From the socket of the destination's family (the one the sender reached, for a reply).
            for socket in sockets where Self.family(of: socket) == e.pointee.ai_family {
                if sendto(socket, bytes, size, Int32(MSG_NOSIGNAL), e.pointee.ai_addr, e.pointee.ai_addrlen) == size { return true }
            }
            entry = e.pointee.ai_next
        }
        return false
    }

    /// The URL replies go to when a message from `source` names a return address, in one form
    /// per endpoint ("osc.udp://HOST:PORT/"): an OSC UDP URL with a numeric host as it is; one
    /// naming a host (liblo's servers name their machine so) at that port on the sender's own
    /// numeric address, since names are never looked up (a slow resolver would stall the control
    /// thread, and a reply never goes where a lookup would lead); a bare port number on this
    /// machine (klick's rule). Nil for anything else.
    package static func replyURL(_ address: String, source: String = "") -> String? {
        if !address.isEmpty && address.utf8.count <= 5 && address.allSatisfy(\.isASCII) && address.allSatisfy(\.isNumber),
           let port = Int(address), (1...65535).contains(port) {
            return "osc.udp://127.0.0.1:\(port)/"
        }
        guard let (host, portText) = udpEndpoint(address), let port = UInt16(portText), port > 0 else { return nil }
        if let numeric = canonical(host) { return url(host: numeric, port: String(port)) }
        guard let (sender, _) = udpEndpoint(source), let numeric = canonical(sender) else { return nil }
        return url(host: numeric, port: String(port))
    }

    /// A numeric IPv4 or IPv6 address in its one written form (`0:0::1` is `::1`); nil for
    /// anything else.
    static func canonical(_ host: String) -> String? {
        var v4 = in_addr(), v6 = in6_addr()
        var text = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
        if inet_pton(AF_INET, host, &v4) == 1, inet_ntop(AF_INET, &v4, &text, socklen_t(text.count)) != nil {
            return String(cString: text)
        }
        if inet_pton(AF_INET6, host, &v6) == 1, inet_ntop(AF_INET6, &v6, &text, socklen_t(text.count)) != nil {
            return String(cString: text)
        }
        return nil
    }

    /// "osc.udp://HOST:PORT/", an IPv6 host in brackets.
    static func url(host: String, port: String) -> String {
        "osc.udp://\(host.contains(":") ? "[\(host)]" : host):\(port)/"
    }

    /// Whether `host` is a numeric IPv4 or IPv6 address.
    package static func isNumeric(_ host: String) -> Bool {
        var v4 = in_addr(), v6 = in6_addr()
        return inet_pton(AF_INET, host, &v4) == 1 || inet_pton(AF_INET6, host, &v6) == 1
    }

    /// The host and port of "osc.udp://host:port/" (an IPv6 host in brackets; anything after the
    /// port's slash ignored), or nil when it is not one: letters, digits, '.', '-', ':' only.
    package static func udpEndpoint(_ url: String) -> (host: String, port: String)? {
        let scheme = "osc.udp://"
        guard url.utf8.count <= 300, url.hasPrefix(scheme) else { return nil }
        var rest = Substring(url.dropFirst(scheme.count))
        if let slash = rest.firstIndex(of: "/") { rest = rest[..<slash] }
        let host: Substring, port: Substring
        if rest.hasPrefix("[") {
            guard let close = rest.firstIndex(of: "]"), rest[rest.index(after: close)...].hasPrefix(":") else { return nil }
            host = rest[rest.index(after: rest.startIndex)..<close]
            port = rest[rest.index(close, offsetBy: 2)...]
        } else {
            guard let colon = rest.lastIndex(of: ":") else { return nil }
            host = rest[..<colon]
            port = rest[rest.index(after: colon)...]
        }
        let hostCharacters = host.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "." || $0 == "-" || $0 == ":") }
        guard !host.isEmpty, hostCharacters, let number = Int(port), (1...65535).contains(number), port.allSatisfy(\.isNumber) else {
            return nil
        }
        return (String(host), String(port))
    }

    /// On the receiving thread: reads datagrams until `close`.
    private static func receiveLoop(sockets: [Int32], inbox: Inbox, closed: Locked<Bool>) {
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: OSCPacket.maximumSize + 1, alignment: 8)
        defer { buffer.deallocate() }
        var pollers = sockets.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
        while !closed.withLock({ $0 }) {
            guard poll(&pollers, nfds_t(pollers.count), 100) > 0 else { continue }
            // Each socket drained (up to 256 datagrams a turn, so that one cannot starve the
            // other): one poll per burst, not per datagram.
            for p in pollers where p.revents & Int16(POLLIN) != 0 {
                var n = 0
                while n < 256, receiveOne(socket: p.fd, buffer: buffer, inbox: inbox) { n += 1 }
            }
        }
    }

    /// Reads one datagram from `socket` and queues its messages; false when none was waiting.
    private static func receiveOne(socket: Int32, buffer: UnsafeMutableRawBufferPointer, inbox: Inbox) -> Bool {
        var from = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let n = withUnsafeMutablePointer(to: &from) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                recvfrom(socket, buffer.baseAddress, buffer.count, Int32(MSG_DONTWAIT), $0, &length)
            }
        }
        guard n >= 0 else { return false }
        guard n > 0 else { return true }
        if let only = inbox.onlyPort, sourcePort(from) != only {
            inbox.droppedCount.withLock { $0 += 1 }
            return true
        }
        let source = endpoint(of: from).map { "osc.udp://\($0.host.contains(":") ? "[\($0.host)]" : $0.host):\($0.port)/" } ?? ""
        if let accepts = inbox.accepts, !accepts(source) {
            inbox.droppedCount.withLock { $0 += 1 }
            return true
        }
        let messages = received(UnsafeRawBufferPointer(rebasing: buffer[0..<n]), source: source, hostNow: inbox.hostNow)
        let refused = inbox.queue.withLock { q -> Int in
            let room = max(0, maximumQueued - q.count)
            q.append(contentsOf: messages.messages.prefix(room))
            return messages.messages.count - min(room, messages.messages.count)
        }
        let lost = refused + (messages.dropped == nil ? 0 : 1)
        if lost > 0 { inbox.droppedCount.withLock { $0 += lost } }
        return true
    }

    /// A classic BPF instruction and program (linux/filter.h's `sock_filter`, `sock_fprog`).
    private struct SocketFilter { var code: UInt16; var jt: UInt8; var jf: UInt8; var k: UInt32 }
    private struct SocketFilterProgram { var length: UInt16; var filter: UnsafeMutablePointer<SocketFilter> }

    /// Attaches a socket filter that keeps only UDP datagrams whose source port is `port` (a UDP
    /// socket's filter sees the datagram from its UDP header on: the source port is its first two
    /// bytes). Best effort: where it cannot be attached, the receiving thread's own test drops them.
    private static func attachPortFilter(_ socket: Int32, port: UInt16) {
        let load: UInt16 = 0x28 /* BPF_LD | BPF_H | BPF_ABS */, jumpIfEqual: UInt16 = 0x15 /* BPF_JMP | BPF_JEQ | BPF_K */
        let ret: UInt16 = 0x06 /* BPF_RET | BPF_K */
        var program = [SocketFilter(code: load, jt: 0, jf: 0, k: 0),
                       SocketFilter(code: jumpIfEqual, jt: 0, jf: 1, k: UInt32(port)),
                       SocketFilter(code: ret, jt: 0, jf: 0, k: 0xFFFF_FFFF),
                       SocketFilter(code: ret, jt: 0, jf: 0, k: 0)]
        program.withUnsafeMutableBufferPointer { instructions in
            var fprog = SocketFilterProgram(length: UInt16(instructions.count), filter: instructions.baseAddress!)
            _ = setsockopt(socket, SOL_SOCKET, SO_ATTACH_FILTER, &fprog, socklen_t(MemoryLayout<SocketFilterProgram>.size))
        }
    }

    /// The source port of an IPv4 or IPv6 address, read from the address itself.
    private static func sourcePort(_ storage: sockaddr_storage) -> UInt16 {
        var storage = storage
        return withUnsafePointer(to: &storage) { p in
            p.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { UInt16(bigEndian: $0.pointee.sin_port) }
        }
    }

    /// The messages of one datagram, with their timetags as host times, and why part of it was
    /// dropped (nil: none was). Pure but for `hostNow`; the fuzz target drives it.
    package static func received(_ packet: UnsafeRawBufferPointer, source: String,
                                 hostNow: () -> UInt64) -> (messages: [OSCMessage], dropped: String?) {
        let (elements, dropped) = OSCPacket.parse(packet)
        var messages: [OSCMessage] = []
        messages.reserveCapacity(elements.count)
        for element in elements {
            var message = OSCMessage(path: element.path, arguments: element.arguments, source: source)
            if let tag = element.timetag {
                let unix = OSCTime.unixMicroseconds(seconds: tag.seconds, fraction: tag.fraction)
                message.unixMicroseconds = unix
                message.hostTime = OSCTime.hostTime(unixMicroseconds: unix, hostNow: hostNow)
            }
            messages.append(message)
        }
        return (messages, dropped)
    }

    /// The address family a socket was opened with.
    private static func family(of socket: Int32) -> Int32 {
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        _ = withUnsafeMutablePointer(to: &storage) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(socket, $0, &length) } }
        return Int32(storage.ss_family)
    }

    /// The numeric host and the port of a socket address (IPv4 or IPv6).
    private static func endpoint(of storage: sockaddr_storage) -> (host: String, port: UInt16)? {
        var storage = storage
        var host = [CChar](repeating: 0, count: Int(NI_MAXHOST))
        var service = [CChar](repeating: 0, count: Int(NI_MAXSERV))
        let length = socklen_t(storage.ss_family == sa_family_t(AF_INET6) ? MemoryLayout<sockaddr_in6>.size : MemoryLayout<sockaddr_in>.size)
        let status = withUnsafePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                getnameinfo($0, length, &host, socklen_t(host.count), &service, socklen_t(service.count), NI_NUMERICHOST | NI_NUMERICSERV)
            }
        }
        func text(_ c: [CChar]) -> String { String(decoding: c.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self) }
        guard status == 0, let port = UInt16(text(service)) else { return nil }
        return (text(host), port)
    }
}
