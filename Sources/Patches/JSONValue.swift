/// A parsed JSON document.
///
/// Unlike `JSONSerialization`'s output, booleans are never numbers, numbers keep the text they were
/// written as (so messages can quote them), and object members keep their file order.
enum JSONValue: Equatable, Sendable {
    case null
    case bool(Bool)
    case number(JSONNumber)
    case string(String)
    case array([JSONValue])
    case object([JSONMember])
}

/// A JSON number: its value and its text in the file.
struct JSONNumber: Equatable, Sendable {
    var value: Double
    var literal: String
}

/// One `"key": value` pair of a JSON object. Keys are unique within an object (the parser rejects
/// duplicates).
struct JSONMember: Equatable, Sendable {
    var key: String
    var value: JSONValue
}

extension JSONValue {
    /// The value as an error message shows it: strings quoted, numbers as written, `true`, `null`,
    /// and containers by kind (`an object`, `an empty array`).
    var summary: String {
        switch self {
        case .null: "null"
        case .bool(let value): value ? "true" : "false"
        case .number(let number): number.literal
        case .string(let string): Self.quoted(string, limit: 40)
        case .array(let elements): elements.isEmpty ? "an empty array" : "an array"
        case .object(let members): members.isEmpty ? "an empty object" : "an object"
        }
    }

    /// `text` as a JSON string literal, cut to `limit` characters with an ellipsis.
    static func quoted(_ text: String, limit: Int = .max) -> String {
        // Most text needs no escape: quoted whole.
        if limit == .max, !text.utf8.contains(where: { $0 == 0x22 || $0 == 0x5C || $0 < 0x20 }) { return "\"" + text + "\"" }
        var result = "\""
        var count = 0
        for scalar in text.unicodeScalars {
            if count == limit {
                result += "…"
                break
            }
            count += 1
            switch scalar {
            case "\"": result += "\\\""
            case "\\": result += "\\\\"
            case "\n": result += "\\n"
            case "\r": result += "\\r"
            case "\t": result += "\\t"
            case _ where scalar.value < 0x20:
                result += "\\u" + String(repeating: "0", count: 4 - String(scalar.value, radix: 16).count)
                    + String(scalar.value, radix: 16)
            default: result.unicodeScalars.append(scalar)
            }
        }
        return result + "\""
    }
}
