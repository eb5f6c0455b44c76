/// One argument of an OSC message.
package enum OSCArgument: Equatable, Sendable, CustomStringConvertible {
    case int(Int32)
    case int64(Int64)
    case float(Float)
    case double(Double)
    case string(String)
    /// A type this program does not read (its OSC type tag).
    case other(Character)

    /// The value of a numeric argument (liblo's i, h, f, d; true/false as 1/0).
    package var number: Double? {
        switch self {
        case .int(let v): Double(v)
        case .int64(let v): Double(v)
        case .float(let v): Double(v)
        case .double(let v): v
        case .string, .other: nil
        }
    }

    package var text: String? {
        if case .string(let s) = self { s } else { nil }
    }

    package var description: String {
        switch self {
        case .int(let v): "\(v)"
        case .int64(let v): "\(v)"
        case .float(let v): "\(v)"
        case .double(let v): "\(v)"
        case .string(let s): "\"\(s)\""
        case .other(let c): "<\(c)>"
        }
    }
}

/// An OSC message as received.
package struct OSCMessage: Sendable, CustomStringConvertible {
    /// The address pattern, e.g. "/klick/metro/start".
    package var path: String
    package var arguments: [OSCArgument]
    /// When it is due, as host time in microseconds on the audio device's clock (JACK's): its
    /// bundle's timetag converted when it arrived. nil: as soon as possible (not in a bundle, or
    /// in a bundle stamped "immediately").
    package var hostTime: UInt64?
    /// The bundle's timetag as microseconds since 1970 (nil: immediately).
    package var unixMicroseconds: Int64?
    /// The sender, as an OSC URL ("osc.udp://127.0.0.1:57120/"): where replies go by default.
    package var source: String

    package init(path: String, arguments: [OSCArgument] = [], hostTime: UInt64? = nil, unixMicroseconds: Int64? = nil,
                source: String = "") {
        self.path = path
        self.arguments = arguments
        self.hostTime = hostTime
        self.unixMicroseconds = unixMicroseconds
        self.source = source
    }

    /// The type tags of the arguments, e.g. "if".
    package var types: String {
        String(arguments.map { a -> Character in
            switch a {
            case .int: "i"
            case .int64: "h"
            case .float: "f"
            case .double: "d"
            case .string: "s"
            case .other(let c): c
            }
        })
    }

    package var description: String { "\(path) ,\(types) \(arguments.map(\.description).joined(separator: " "))" }
}
