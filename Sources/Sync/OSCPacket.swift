import CLiblo
import Glibc

/// Reads one OSC packet (a UDP datagram): a message, or a bundle of messages and bundles, each
/// with the timetag of the bundle that holds it. Bundles are walked here, with a depth limit;
/// each message is parsed by liblo (`lo_message_deserialise`). Anything malformed is dropped
/// with a reason; nothing here allocates more than the packet's size. Any thread; pure.
package enum OSCPacket {
    /// Bundles nested deeper than this are refused (OSC sets no limit; klick and liblo's senders
    /// nest one or two levels).
    package static let maximumDepth = 8
    /// The largest packet read: a UDP datagram's payload.
    package static let maximumSize = 65_507

    /// A message as it arrived: its path and arguments, and its bundle's timetag (nil: immediately).
    package struct Element: Sendable {
        package var path: String
        package var arguments: [OSCArgument]
        package var timetag: (seconds: UInt32, fraction: UInt32)?
    }

    /// The messages in `bytes`, in order, and the reason the rest was dropped (nil: nothing was).
    package static func parse(_ bytes: UnsafeRawBufferPointer) -> (elements: [Element], dropped: String?) {
        var elements: [Element] = []
        var dropped: String?
        guard bytes.count <= maximumSize else { return ([], "the packet is larger than \(maximumSize) bytes") }
        walk(bytes, timetag: nil, depth: 0, into: &elements, dropped: &dropped)
        return (elements, dropped)
    }

    private static let bundleTag: [UInt8] = Array("#bundle".utf8) + [0]

    private static func walk(_ bytes: UnsafeRawBufferPointer, timetag: (UInt32, UInt32)?, depth: Int,
                             into elements: inout [Element], dropped: inout String?) {
        if bytes.count >= 8 && bytes.prefix(8).elementsEqual(bundleTag) {
            guard depth < maximumDepth else { dropped = "bundles nested more than \(maximumDepth) deep"; return }
            guard bytes.count >= 16 else { dropped = "a bundle without its timetag"; return }
            let seconds = bigEndian32(bytes, 8), fraction = bigEndian32(bytes, 12)
            // 0.000…1 is OSC's "immediately".
            let tag: (UInt32, UInt32)? = (seconds == 0 && fraction <= 1) ? nil : (seconds, fraction)
            var offset = 16
            while offset < bytes.count {
                guard offset + 4 <= bytes.count else { dropped = "a bundle element without its size"; return }
                let size = Int(bigEndian32(bytes, offset))
                offset += 4
                guard size > 0, size % 4 == 0, size <= bytes.count - offset else {
                    dropped = "a bundle element of \(size) bytes where \(bytes.count - offset) remain"
                    return
                }
                walk(UnsafeRawBufferPointer(rebasing: bytes[offset..<offset + size]), timetag: tag, depth: depth + 1,
                     into: &elements, dropped: &dropped)
                offset += size
            }
            return
        }
        guard let element = message(bytes, timetag: timetag) else {
            dropped = "a message liblo could not read"
            return
        }
        elements.append(element)
    }

    private static func bigEndian32(_ bytes: UnsafeRawBufferPointer, _ offset: Int) -> UInt32 {
        UInt32(bytes[offset]) << 24 | UInt32(bytes[offset + 1]) << 16 | UInt32(bytes[offset + 2]) << 8 | UInt32(bytes[offset + 3])
    }

    private static func message(_ bytes: UnsafeRawBufferPointer, timetag: (UInt32, UInt32)?) -> Element? {
        guard bytes.count >= 4, bytes.count % 4 == 0, bytes[0] == UInt8(ascii: "/"), let base = bytes.baseAddress else { return nil }
        // liblo reads in place and may write (it swaps byte order): give it its own copy.
        let copy = UnsafeMutableRawBufferPointer.allocate(byteCount: bytes.count, alignment: 8)
        defer { copy.deallocate() }
        copy.copyMemory(from: UnsafeRawBufferPointer(start: base, count: bytes.count))
        var result: Int32 = 0
        guard let m = lo_message_deserialise(copy.baseAddress, bytes.count, &result), result == 0 else { return nil }
        defer { lo_message_free(m) }
        guard let cPath = lo_get_path(copy.baseAddress, bytes.count) else { return nil }
        let path = String(cString: cPath)
        var arguments: [OSCArgument] = []
        let count = Int(lo_message_get_argc(m))
        if count > 0, let types = lo_message_get_types(m), let argv = lo_message_get_argv(m) {
            for i in 0..<count {
                guard let arg = argv[i] else { continue }
                arguments.append(argument(type: UInt8(bitPattern: types[i]), arg))
            }
        }
        return Element(path: path, arguments: arguments, timetag: timetag)
    }

    /// One argument read with a load of its own size: `lo_arg` is a union as large as its largest
    /// member, and liblo allocates only what each argument holds (reading `.pointee` whole reads
    /// past a 4-byte int).
    private static func argument(type: UInt8, _ arg: UnsafeMutablePointer<lo_arg>) -> OSCArgument {
        let raw = UnsafeRawPointer(arg)
        return switch type {
        case UInt8(ascii: "i"): .int(raw.loadUnaligned(as: Int32.self))
        case UInt8(ascii: "h"): .int64(raw.loadUnaligned(as: Int64.self))
        case UInt8(ascii: "f"): .float(raw.loadUnaligned(as: Float.self))
        case UInt8(ascii: "d"): .double(raw.loadUnaligned(as: Double.self))
        case UInt8(ascii: "s"), UInt8(ascii: "S"): .string(String(cString: raw.assumingMemoryBound(to: CChar.self)))
        case UInt8(ascii: "T"): .int(1)
        case UInt8(ascii: "F"): .int(0)
        case let t: .other(Character(Unicode.Scalar(t)))
        }
    }
}
