import CLiblo
import Glibc
import Locking

/// Why an OSC server could not start.
package struct OSCError: Error, CustomStringConvertible, Sendable {
    package var description: String
    package init(_ description: String) { self.description = description }
}

/// Receives OSC messages over UDP on one port, through liblo's server thread, and keeps them
/// for a control thread to take; sends replies from the same port (as klick does, so a client
/// sees them come from the address it sends to).
///
/// liblo's own queue of future bundles is switched off: a bundle's messages are handed over as
/// soon as they arrive, each with its timetag converted to host time on the device's clock
/// (`hostNow`), and the program schedules them on their exact frame instead of liblo waking
/// up for them on its 10 ms poll.
///
/// Threads: `take`, `send` and `close` from any control thread; the handler runs on liblo's
/// thread and only converts and queues.
///
/// `@unchecked Sendable` by contract: `queue` is a `Locked`; `thread` and `port` are set in
/// `init` before liblo's thread starts and never change; liblo's server is only touched by its
/// thread, except `lo_send_message_from` (a `sendto` on its socket, safe beside its `recvfrom`)
/// and `lo_server_thread_free` in `close`, after which nothing touches it (`closed` is a `Locked`).
package final class OSCServer: @unchecked Sendable {
    private let thread: lo_server_thread
    /// The UDP port it listens on.
    package let port: Int
    private let hostNow: @Sendable () -> UInt64
    private let queue = Locked<[OSCMessage]>([])
    private let closed = Locked(false)

    /// Listens on UDP `port` ("0" or nil: a free port, see `port`). `hostNow` reads the device's
    /// host clock in microseconds (JACK's `jack_get_time`).
    package init(port: String?, hostNow: @escaping @Sendable () -> UInt64) throws(OSCError) {
        let requested = port ?? "0"
        let made = requested == "0" ? lo_server_thread_new_with_proto(nil, LO_UDP, { _, _, _ in })
            : lo_server_thread_new_with_proto(requested, LO_UDP, { _, _, _ in })
        guard let thread = made else {
            throw OSCError("cannot listen for OSC on UDP port \(requested) (in use, or not a port number)")
        }
        self.thread = thread
        self.port = Int(lo_server_thread_get_port(thread))
        self.hostNow = hostNow
        let server = lo_server_thread_get_server(thread)
        lo_server_enable_queue(server, 0, 1)
        let handler: lo_method_handler = { path, types, argv, argc, message, user in
            guard let user, let path else { return 1 }
            // No retain here: a release on liblo's thread could run deinit there, and deinit
            // joins that thread. The owner keeps the server alive until `close()` has joined it.
            Unmanaged<OSCServer>.fromOpaque(user)._withUnsafeGuaranteedRef {
                $0.receive(path: String(cString: path), types: types, argv: argv, count: Int(argc), message: message)
            }
            return 0
        }
        lo_server_thread_add_method(thread, nil, nil, handler, Unmanaged.passUnretained(self).toOpaque())
        // On failure deinit frees the thread (every property is set by now).
        guard lo_server_thread_start(thread) >= 0 else { throw OSCError("cannot start the OSC server thread") }
    }

    deinit { close() }

    /// Stops liblo's thread and closes the port. Idempotent; not from a handler (there is none
    /// of the user's: messages are taken on a control thread).
    package func close() {
        let wasOpen = closed.withLock { c in
            defer { c = true }
            return !c
        }
        if wasOpen { lo_server_thread_free(thread) }
    }

    /// The messages received since the previous call, in order.
    package func take() -> [OSCMessage] {
        queue.withLock { q in
            defer { q = [] }
            return q
        }
    }

    /// Sends a plain message to `url` ("osc.udp://host:port/") from this server's port.
    /// Returns false when the address is not valid or the send failed.
    @discardableResult
    package func send(_ path: String, _ arguments: [OSCArgument], to url: String) -> Bool {
        guard closed.withLock({ !$0 }), let address = lo_address_new_from_url(url) else { return false }
        defer { lo_address_free(address) }
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
        return lo_send_message_from(address, lo_server_thread_get_server(thread), path, message) >= 0
    }

    /// The URL replies go to when a message names a return address: an OSC URL as it is, or a
    /// bare port number for this machine (klick's rule).
    package static func replyURL(_ address: String) -> String? {
        if !address.isEmpty && address.allSatisfy(\.isNumber) { return "osc.udp://127.0.0.1:\(address)/" }
        return address.hasPrefix("osc.") ? address : nil
    }

    /// On liblo's thread: reads the arguments, converts the timetag, queues the message.
    private func receive(path: String, types: UnsafePointer<CChar>?, argv: UnsafeMutablePointer<UnsafeMutablePointer<lo_arg>?>?,
                         count: Int, message: lo_message?) {
        var arguments: [OSCArgument] = []
        if let types, let argv {
            for i in 0..<count {
                guard let arg = argv[i] else { continue }
                switch UInt8(bitPattern: types[i]) {
                case UInt8(ascii: "i"): arguments.append(.int(arg.pointee.i))
                case UInt8(ascii: "h"): arguments.append(.int64(arg.pointee.h))
                case UInt8(ascii: "f"): arguments.append(.float(arg.pointee.f))
                case UInt8(ascii: "d"): arguments.append(.double(arg.pointee.d))
                case UInt8(ascii: "s"), UInt8(ascii: "S"):
                    arguments.append(.string(String(cString: UnsafeRawPointer(arg).assumingMemoryBound(to: CChar.self))))
                case UInt8(ascii: "T"): arguments.append(.int(1))
                case UInt8(ascii: "F"): arguments.append(.int(0))
                case let t: arguments.append(.other(Character(Unicode.Scalar(t))))
                }
            }
        }
        var received = OSCMessage(path: path, arguments: arguments)
        if let message {
            let tag = lo_message_get_timestamp(message)
            if !(tag.sec == 0 && tag.frac <= 1) {
                let unix = OSCTime.unixMicroseconds(seconds: tag.sec, fraction: tag.frac)
                received.unixMicroseconds = unix
                received.hostTime = OSCTime.hostTime(unixMicroseconds: unix, hostNow: hostNow)
            }
            if let source = lo_message_get_source(message), let url = lo_address_get_url(source) {
                received.source = String(cString: url)
                free(url)
            }
        }
        queue.withLock { $0.append(received) }
    }
}
