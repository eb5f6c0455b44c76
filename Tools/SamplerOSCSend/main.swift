// sampler-osc-send: an independent OSC client (liblo only, no code of the sampler's) for the
// tests of the OSC interfaces.
//
//   sampler-osc-send --port P [--host H] [--in-ms MS | --at-us T] [--replies N] [--timeout S] PATH [ARG …]
//
// Sends PATH with its arguments (i:3, f:120, d:0.5, s:text, or a bare word as a string) to
// UDP H:P (default 127.0.0.1). With --in-ms the message goes in a bundle whose timetag is the
// wall clock (CLOCK_REALTIME) now plus MS milliseconds; with --at-us, one stamped T µs since
// 1970; otherwise a plain message. Prints "sent PATH at T" (T: the timetag in µs since 1970, 0
// for a plain message). With --replies N it then waits (at most --timeout S seconds, default
// 5) for N messages back on the port it sent from and prints each as "reply PATH ,TYPES ARGS".
import CLiblo
@preconcurrency import Glibc

func fail(_ message: String) -> Never {
    fputs("sampler-osc-send: \(message)\n", stderr)
    exit(1)
}

/// The replies, appended by `replyHandler` (called by liblo inside `lo_server_recv_noblock`, on
/// the main thread).
final class Received {
    var lines: [String] = []
}

/// liblo's handler for every reply (a plain function: a C callback must not capture).
func replyHandler(_ path: UnsafePointer<CChar>?, _ types: UnsafePointer<CChar>?, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<lo_arg>?>?,
                  _ argc: Int32, _ message: lo_message?, _ user: UnsafeMutableRawPointer?) -> Int32 {
    let received = Unmanaged<Received>.fromOpaque(user!).takeUnretainedValue()
    let typeString = types.map { String(cString: $0) } ?? ""
    var values: [String] = []
    for (i, t) in typeString.utf8.enumerated() where i < Int(argc) {
        guard let arg = argv?[i] else { continue }
        switch t {
        case UInt8(ascii: "i"): values.append("\(arg.pointee.i)")
        case UInt8(ascii: "f"): values.append("\(arg.pointee.f)")
        case UInt8(ascii: "d"): values.append("\(arg.pointee.d)")
        case UInt8(ascii: "h"): values.append("\(arg.pointee.h)")
        case UInt8(ascii: "s"), UInt8(ascii: "S"):
            values.append(String(cString: UnsafeRawPointer(arg).assumingMemoryBound(to: CChar.self)))
        default: values.append("?")
        }
    }
    received.lines.append("reply \(path.map { String(cString: $0) } ?? "") ,\(typeString) \(values.joined(separator: " "))")
    return 0
}

/// liblo's error handler: errors are reported by the calls' results instead.
func ignoreError(_ number: Int32, _ message: UnsafePointer<CChar>?, _ location: UnsafePointer<CChar>?) {}

func realtimeMicroseconds() -> Int64 {
    var ts = timespec()
    clock_gettime(CLOCK_REALTIME, &ts)
    return Int64(ts.tv_sec) * 1_000_000 + Int64(ts.tv_nsec) / 1000
}

var host = "127.0.0.1"
var port: String?
var inMilliseconds: Double?
var atMicroseconds: Int64?
var replies = 0
var timeout = 5.0
var rest: [String] = []
var args = CommandLine.arguments.dropFirst().makeIterator()
while let a = args.next() {
    switch a {
    case "--host": host = args.next() ?? host
    case "--port": port = args.next()
    case "--in-ms": inMilliseconds = Double(args.next() ?? "")
    case "--at-us": atMicroseconds = Int64(args.next() ?? "")
    case "--replies": replies = Int(args.next() ?? "") ?? 0
    case "--timeout": timeout = Double(args.next() ?? "") ?? timeout
    default: rest.append(a)
    }
}
guard let port, let path = rest.first, path.hasPrefix("/") else {
    fail("usage: --port P [--host H] [--in-ms MS | --at-us T] [--replies N] PATH [ARG …]")
}

// A server of our own on a free port: the message goes out from it, and replies come back to it.
guard let server = lo_server_new_with_proto(nil, LO_UDP, ignoreError) else { fail("cannot open a UDP port") }
guard let address = lo_address_new(host, port) else { fail("bad address \(host):\(port)") }
let message = lo_message_new()
for argument in rest.dropFirst() {
    let parts = argument.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false).map(String.init)
    switch (parts.count == 2 ? parts[0] : "", parts.last ?? "") {
    case ("i", let v): lo_message_add_int32(message, Int32(v) ?? 0)
    case ("f", let v): lo_message_add_float(message, Float(v) ?? 0)
    case ("d", let v): lo_message_add_double(message, Double(v) ?? 0)
    case ("s", let v): lo_message_add_string(message, v)
    default: lo_message_add_string(message, argument)
    }
}

var stamp: Int64 = 0
if inMilliseconds != nil || atMicroseconds != nil {
    stamp = atMicroseconds ?? (realtimeMicroseconds() + Int64((inMilliseconds! * 1000).rounded()))
    let seconds = stamp / 1_000_000, micro = stamp % 1_000_000
    let tag = lo_timetag(sec: UInt32(truncatingIfNeeded: seconds + 2_208_988_800),
                         frac: UInt32((UInt64(micro) << 32 + 500_000) / 1_000_000))
    let bundle = lo_bundle_new(tag)
    lo_bundle_add_message(bundle, path, message)
    guard lo_send_bundle_from(address, server, bundle) >= 0 else { fail("cannot send to \(host):\(port)") }
    lo_bundle_free(bundle)
} else {
    guard lo_send_message_from(address, server, path, message) >= 0 else { fail("cannot send to \(host):\(port)") }
}
print("sent \(path) at \(stamp)")
fflush(nil)

if replies > 0 {
    let received = Received()
    lo_server_add_method(server, nil, nil, replyHandler, Unmanaged.passUnretained(received).toOpaque())
    let deadline = realtimeMicroseconds() + Int64(timeout * 1_000_000)
    while received.lines.count < replies && realtimeMicroseconds() < deadline {
        lo_server_recv_noblock(server, 50)
    }
    for line in received.lines { print(line) }
    if received.lines.count < replies { fail("\(received.lines.count) of \(replies) replies within \(timeout) s") }
}
lo_message_free(message)
lo_address_free(address)
lo_server_free(server)
