/// A syntax error in a JSON document. Lines and columns count from 1; a column counts Unicode
/// scalars, so a tab or an "é" is one column.
struct JSONSyntaxError: Error, Equatable, Sendable {
    var line: Int
    var column: Int
    var message: String
}

/// A strict RFC 8259 JSON parser that says where a syntax error is.
///
/// `JSONSerialization` reports only a character offset on some platforms, silently keeps the last
/// of two equal keys and accepts trailing commas; a patch file is written by hand, so each of these
/// deserves a precise error instead. Duplicate keys are rejected here: in a patch the second
/// `"kick"` would otherwise quietly replace the first.
struct JSONParser {
    /// How deeply arrays and objects may nest; deeper documents are rejected rather than risking
    /// the stack.
    static let maximumDepth = 256

    static func parse(_ bytes: [UInt8]) throws(JSONSyntaxError) -> JSONValue {
        var parser = JSONParser(bytes: bytes)
        return try parser.parseDocument()
    }

    private let bytes: [UInt8]
    private var offset = 0
    private var depth = 0
    private let hasByteOrderMark: Bool

    private init(bytes: [UInt8]) {
        self.bytes = bytes
        hasByteOrderMark = bytes.starts(with: [0xEF, 0xBB, 0xBF])
    }

    private mutating func parseDocument() throws(JSONSyntaxError) -> JSONValue {
        if let invalid = Self.firstInvalidUTF8Offset(in: bytes) {
            throw error(at: invalid, "the file is not UTF-8 text")
        }
        if hasByteOrderMark { offset = 3 }
        skipWhitespace()
        let value = try parseValue()
        skipWhitespace()
        guard offset == bytes.count else {
            throw error("expected the end of the file after the JSON value, got \(found())")
        }
        return value
    }

    private mutating func parseValue() throws(JSONSyntaxError) -> JSONValue {
        guard let byte = peek else { throw error("expected a value, got \(found())") }
        switch byte {
        case UInt8(ascii: "{"): return try parseObject()
        case UInt8(ascii: "["): return try parseArray()
        case UInt8(ascii: "\""): return .string(try parseString())
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return .number(try parseNumber())
        case UInt8(ascii: "t"): return try parseLiteral("true", .bool(true))
        case UInt8(ascii: "f"): return try parseLiteral("false", .bool(false))
        case UInt8(ascii: "n"): return try parseLiteral("null", .null)
        default: throw error("expected a value, got \(found())")
        }
    }

    private mutating func parseObject() throws(JSONSyntaxError) -> JSONValue {
        try enterContainer()
        var members: [JSONMember] = []
        var keys = Set<String>()
        skipWhitespace()
        if peek == UInt8(ascii: "}") {
            return leaveContainer(.object(members))
        }
        while true {
            guard peek == UInt8(ascii: "\"") else {
                let hint = peek == UInt8(ascii: "}") ? " (JSON allows no comma before '}')" : ""
                throw error("expected a key in double quotes, got \(found())\(hint)")
            }
            let keyOffset = offset
            let key = try parseString()
            guard keys.insert(key).inserted else {
                throw error(at: keyOffset, "duplicate key \(JSONValue.quoted(key))")
            }
            skipWhitespace()
            guard peek == UInt8(ascii: ":") else { throw error("expected ':' after the key, got \(found())") }
            offset += 1
            skipWhitespace()
            members.append(JSONMember(key: key, value: try parseValue()))
            skipWhitespace()
            switch peek {
            case UInt8(ascii: ","): offset += 1; skipWhitespace()
            case UInt8(ascii: "}"): return leaveContainer(.object(members))
            default: throw error("expected ',' or '}', got \(found())")
            }
        }
    }

    private mutating func parseArray() throws(JSONSyntaxError) -> JSONValue {
        try enterContainer()
        var elements: [JSONValue] = []
        skipWhitespace()
        if peek == UInt8(ascii: "]") {
            return leaveContainer(.array(elements))
        }
        while true {
            if peek == UInt8(ascii: "]") {
                throw error("expected a value, got ']' (JSON allows no comma before ']')")
            }
            elements.append(try parseValue())
            skipWhitespace()
            switch peek {
            case UInt8(ascii: ","): offset += 1; skipWhitespace()
            case UInt8(ascii: "]"): return leaveContainer(.array(elements))
            default: throw error("expected ',' or ']', got \(found())")
            }
        }
    }

    private mutating func enterContainer() throws(JSONSyntaxError) {
        depth += 1
        guard depth <= Self.maximumDepth else {
            throw error("arrays and objects nest deeper than \(Self.maximumDepth) levels")
        }
        offset += 1
    }

    private mutating func leaveContainer(_ value: JSONValue) -> JSONValue {
        depth -= 1
        offset += 1
        return value
    }

    private mutating func parseString() throws(JSONSyntaxError) -> String {
        let start = offset
        offset += 1
        var utf8: [UInt8] = []
        while true {
            guard let byte = peek else { throw error(at: start, "unterminated string") }
            switch byte {
            case UInt8(ascii: "\""):
                offset += 1
                return String(decoding: utf8, as: UTF8.self)
            case UInt8(ascii: "\\"):
                try parseEscape(into: &utf8)
            case 0x0A, 0x0D:
                throw error(at: start, "unterminated string (a string cannot span lines; write \\n for a line break)")
            case ..<0x20:
                throw error("control character U+\(Self.hex(UInt32(byte))) in a string (escape it)")
            default:
                utf8.append(byte)
                offset += 1
            }
        }
    }

    private mutating func parseEscape(into utf8: inout [UInt8]) throws(JSONSyntaxError) {
        let start = offset
        offset += 1
        guard let byte = peek else { throw error("unterminated string") }
        offset += 1
        let simple: UInt8? = switch byte {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): byte
        case UInt8(ascii: "b"): 0x08
        case UInt8(ascii: "f"): 0x0C
        case UInt8(ascii: "n"): 0x0A
        case UInt8(ascii: "r"): 0x0D
        case UInt8(ascii: "t"): 0x09
        default: nil
        }
        if let simple {
            utf8.append(simple)
            return
        }
        guard byte == UInt8(ascii: "u") else {
            offset = start
            throw error("invalid escape \(found(length: 2)) in a string")
        }
        var value = try parseHexQuad()
        if (0xD800...0xDBFF).contains(value) {
            guard bytes[offset...].starts(with: [UInt8(ascii: "\\"), UInt8(ascii: "u")]) else {
                throw error(at: start, "unpaired UTF-16 surrogate in a \\u escape")
            }
            offset += 2
            let low = try parseHexQuad()
            guard (0xDC00...0xDFFF).contains(low) else {
                throw error(at: start, "unpaired UTF-16 surrogate in a \\u escape")
            }
            value = 0x10000 + ((value - 0xD800) << 10) + (low - 0xDC00)
        }
        guard let scalar = Unicode.Scalar(value) else {
            throw error(at: start, "unpaired UTF-16 surrogate in a \\u escape")
        }
        utf8.append(contentsOf: String(scalar).utf8)
    }

    private mutating func parseHexQuad() throws(JSONSyntaxError) -> UInt32 {
        var value: UInt32 = 0
        for _ in 0..<4 {
            guard let byte = peek, let digit = Self.hexDigitValue(byte) else {
                throw error("expected four hexadecimal digits after '\\u', got \(found())")
            }
            value = value << 4 | digit
            offset += 1
        }
        return value
    }

    private mutating func parseNumber() throws(JSONSyntaxError) -> JSONNumber {
        let start = offset
        if peek == UInt8(ascii: "-") { offset += 1 }
        guard peek.map(Self.isDigit) == true else { throw error("expected a digit after '-', got \(found())") }
        if peek == UInt8(ascii: "0") {
            offset += 1
            if peek.map(Self.isDigit) == true { throw error(at: start, "numbers cannot have leading zeros") }
        } else {
            skipDigits()
        }
        if peek == UInt8(ascii: ".") {
            offset += 1
            guard peek.map(Self.isDigit) == true else { throw error("expected a digit after '.', got \(found())") }
            skipDigits()
        }
        if peek == UInt8(ascii: "e") || peek == UInt8(ascii: "E") {
            offset += 1
            if peek == UInt8(ascii: "+") || peek == UInt8(ascii: "-") { offset += 1 }
            guard peek.map(Self.isDigit) == true else {
                throw error("expected a digit in the exponent, got \(found())")
            }
            skipDigits()
        }
        let literal = String(decoding: bytes[start..<offset], as: UTF8.self)
        guard let value = Double(literal), value.isFinite else {
            throw error(at: start, "the number \(literal) is too large")
        }
        return JSONNumber(value: value, literal: literal)
    }

    private mutating func parseLiteral(_ word: String, _ value: JSONValue) throws(JSONSyntaxError) -> JSONValue {
        guard bytes[offset...].starts(with: word.utf8) else { throw error("expected a value, got \(found())") }
        offset += word.utf8.count
        return value
    }

    // MARK: - Bytes

    private var peek: UInt8? { offset < bytes.count ? bytes[offset] : nil }

    private mutating func skipWhitespace() {
        while let byte = peek, byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09 { offset += 1 }
    }

    private mutating func skipDigits() {
        while let byte = peek, Self.isDigit(byte) { offset += 1 }
    }

    private static func isDigit(_ byte: UInt8) -> Bool { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) }

    private static func isWordByte(_ byte: UInt8) -> Bool {
        isDigit(byte) || (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte)
            || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte) || byte == UInt8(ascii: "_")
    }

    private static func hexDigitValue(_ byte: UInt8) -> UInt32? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): UInt32(byte - UInt8(ascii: "0"))
        case UInt8(ascii: "a")...UInt8(ascii: "f"): UInt32(byte - UInt8(ascii: "a") + 10)
        case UInt8(ascii: "A")...UInt8(ascii: "F"): UInt32(byte - UInt8(ascii: "A") + 10)
        default: nil
        }
    }

    private static func hex(_ value: UInt32) -> String {
        let digits = String(value, radix: 16, uppercase: true)
        return String(repeating: "0", count: max(0, 4 - digits.count)) + digits
    }

    /// What stands at the current offset, for "expected …, got …": a whole word such as `'True'`,
    /// one character such as `','`, or a description.
    private func found(length: Int? = nil) -> String {
        guard let byte = peek else { return "the end of the file" }
        if byte == UInt8(ascii: "\"") && length == nil { return "a string" }
        if byte == UInt8(ascii: "/"), offset + 1 < bytes.count,
           bytes[offset + 1] == UInt8(ascii: "/") || bytes[offset + 1] == UInt8(ascii: "*") {
            return "a comment (JSON has no comments)"
        }
        if byte < 0x20 { return "control character U+\(Self.hex(UInt32(byte)))" }
        var end = offset + 1
        if let length {
            end = min(bytes.count, offset + length)
        } else if Self.isWordByte(byte) {
            while end < bytes.count, end - offset < 40, Self.isWordByte(bytes[end]) { end += 1 }
        } else {
            // One whole character: skip the continuation bytes of a multi-byte UTF-8 sequence.
            while end < bytes.count, bytes[end] & 0xC0 == 0x80 { end += 1 }
        }
        return "'\(String(decoding: bytes[offset..<end], as: UTF8.self))'"
    }

    // MARK: - Errors

    private func error(_ message: String) -> JSONSyntaxError { error(at: offset, message) }

    private func error(at errorOffset: Int, _ message: String) -> JSONSyntaxError {
        var line = 1
        var lineStart = 0
        for index in 0..<errorOffset where bytes[index] == 0x0A {
            line += 1
            lineStart = index + 1
        }
        // Count characters, not bytes: UTF-8 continuation bytes do not start a column.
        var column = 1
        for byte in bytes[lineStart..<errorOffset] where byte & 0xC0 != 0x80 { column += 1 }
        if lineStart == 0 && hasByteOrderMark && errorOffset >= 3 { column -= 1 }
        return JSONSyntaxError(line: line, column: column, message: message)
    }

    private static func firstInvalidUTF8Offset(in bytes: [UInt8]) -> Int? {
        var parser = Unicode.UTF8.ForwardParser()
        var iterator = bytes.makeIterator()
        var offset = 0
        while true {
            switch parser.parseScalar(from: &iterator) {
            case .valid(let encoded): offset += encoded.count
            case .emptyInput: return nil
            case .error: return offset
            }
        }
    }
}
