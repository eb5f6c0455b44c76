/// A small, strict, non-validating XML reader for Hydrogen's files: elements, attributes
/// (skipped), text, the five predefined entities and character references, CDATA, comments,
/// processing instructions and a DOCTYPE (skipped: no entity is ever defined or expanded, no
/// external resource is ever read). Written for the project because Foundation's XMLParser on
/// Linux crashes on hostile input (found by `make fuzz`: a NULL dereference on a processing
/// instruction without data, a trap on element names that are not UTF-8).
///
/// Limits: nesting depth `maximumDepth`; the caller bounds the size. Errors carry a line number.
struct XMLReader {
    struct Failure: Error { let line: Int; let message: String }

    static let maximumDepth = 256

    private let bytes: [UInt8]
    private var i = 0
    private var line = 1

    /// Parses `bytes` (UTF-8) and returns the root element.
    static func parse(_ bytes: [UInt8]) throws(Failure) -> XMLElementNode {
        var reader = XMLReader(bytes: bytes)
        return try reader.document()
    }

    private init(bytes: [UInt8]) { self.bytes = bytes }

    private func fail(_ message: String) -> Failure { Failure(line: line, message: message) }

    private mutating func document() throws(Failure) -> XMLElementNode {
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { i = 3 }
        try misc()
        guard peek == UInt8(ascii: "<") else { throw fail(i < bytes.count ? "expected an element" : "no root element") }
        let root = try element(depth: 1)
        try misc()
        guard i == bytes.count else { throw fail("content after the root element") }
        return root
    }

    /// Whitespace, comments, processing instructions and a DOCTYPE, outside the root.
    private mutating func misc() throws(Failure) {
        while i < bytes.count {
            if isSpace(bytes[i]) { advance(); continue }
            if starts("<?") { try skip(past: "?>"); continue }
            if starts("<!--") { try skip(past: "-->"); continue }
            if starts("<!DOCTYPE") { try doctype(); continue }
            return
        }
    }

    /// Skips a DOCTYPE, with an internal subset if any, without interpreting it.
    private mutating func doctype() throws(Failure) {
        var depth = 0
        while i < bytes.count {
            let b = bytes[i]
            advance()
            if b == UInt8(ascii: "[") { depth += 1 }
            if b == UInt8(ascii: "]") { depth -= 1 }
            if b == UInt8(ascii: ">") && depth <= 0 { return }
        }
        throw fail("unterminated DOCTYPE")
    }

    private mutating func element(depth: Int) throws(Failure) -> XMLElementNode {
        guard depth <= Self.maximumDepth else { throw fail("elements nest deeper than \(Self.maximumDepth) levels") }
        advance()  // <
        let node = XMLElementNode(name: try name())
        // Attributes: name="value" or name='value', skipped.
        while true {
            skipSpace()
            guard let b = peek else { throw fail("unterminated start tag <\(node.name)>") }
            if b == UInt8(ascii: "/") {
                advance()
                guard peek == UInt8(ascii: ">") else { throw fail("expected > after / in <\(node.name)>") }
                advance()
                return node
            }
            if b == UInt8(ascii: ">") { advance(); break }
            _ = try name()
            skipSpace()
            guard peek == UInt8(ascii: "=") else { throw fail("expected = after an attribute name in <\(node.name)>") }
            advance()
            skipSpace()
            guard let quote = peek, quote == UInt8(ascii: "\"") || quote == UInt8(ascii: "'") else {
                throw fail("expected a quoted attribute value in <\(node.name)>")
            }
            advance()
            while let c = peek, c != quote {
                if c == UInt8(ascii: "<") { throw fail("< inside an attribute value") }
                advance()
            }
            guard peek == quote else { throw fail("unterminated attribute value in <\(node.name)>") }
            advance()
        }
        // Content.
        var text: [UInt8] = []
        while true {
            guard let b = peek else { throw fail("<\(node.name)> is not closed") }
            if b == UInt8(ascii: "<") {
                if starts("</") {
                    i += 2
                    let closing = try name()
                    skipSpace()
                    guard peek == UInt8(ascii: ">") else { throw fail("expected > to close </\(closing)>") }
                    advance()
                    guard closing == node.name else { throw fail("</\(closing)> closes <\(node.name)>") }
                    node.text += String(decoding: text, as: UTF8.self)
                    return node
                } else if starts("<!--") {
                    try skip(past: "-->")
                } else if starts("<![CDATA[") {
                    i += 9
                    let start = i
                    try skip(past: "]]>")
                    text += bytes[start..<(i - 3)]
                } else if starts("<?") {
                    try skip(past: "?>")
                } else {
                    node.children.append(try element(depth: depth + 1))
                }
            } else if b == UInt8(ascii: "&") {
                text += try reference()
            } else {
                text.append(b)
                advance()
            }
        }
    }

    /// `&amp;`, `&lt;`, `&gt;`, `&quot;`, `&apos;`, `&#N;`, `&#xN;`; nothing else (no entity is defined).
    private mutating func reference() throws(Failure) -> [UInt8] {
        advance()  // &
        let start = i
        while let b = peek, b != UInt8(ascii: ";") {
            guard i - start < 12 else { throw fail("unterminated character reference") }
            advance()
        }
        guard peek == UInt8(ascii: ";") else { throw fail("unterminated character reference") }
        let body = String(decoding: bytes[start..<i], as: UTF8.self)
        advance()
        switch body {
        case "amp": return [UInt8(ascii: "&")]
        case "lt": return [UInt8(ascii: "<")]
        case "gt": return [UInt8(ascii: ">")]
        case "quot": return [UInt8(ascii: "\"")]
        case "apos": return [UInt8(ascii: "'")]
        default:
            var value: UInt32?
            if body.hasPrefix("#x") { value = UInt32(body.dropFirst(2), radix: 16) } else if body.hasPrefix("#") { value = UInt32(body.dropFirst()) }
            guard let value, let scalar = Unicode.Scalar(value), value != 0 else { throw fail("unknown entity &\(body.prefix(12));") }
            return Array(String(Character(scalar)).utf8)
        }
    }

    private mutating func name() throws(Failure) -> String {
        let start = i
        while let b = peek, !isSpace(b), b != UInt8(ascii: ">"), b != UInt8(ascii: "/"), b != UInt8(ascii: "="),
              b != UInt8(ascii: "<"), b != UInt8(ascii: "&"), b != UInt8(ascii: "\""), b != UInt8(ascii: "'") {
            advance()
        }
        guard i > start else { throw fail("expected a name") }
        return String(decoding: bytes[start..<i], as: UTF8.self)
    }

    private mutating func skip(past terminator: String) throws(Failure) {
        let t = Array(terminator.utf8)
        while i < bytes.count {
            if bytes[i...].starts(with: t) { i += t.count; return }
            advance()
        }
        throw fail("unterminated \(terminator == "-->" ? "comment" : terminator == "]]>" ? "CDATA section" : "processing instruction")")
    }

    private var peek: UInt8? { i < bytes.count ? bytes[i] : nil }
    private func starts(_ s: String) -> Bool { bytes[i...].starts(with: s.utf8) }
    private func isSpace(_ b: UInt8) -> Bool { b == 0x20 || b == 0x09 || b == 0x0A || b == 0x0D }
    private mutating func advance() {
        if bytes[i] == 0x0A { line += 1 }
        i += 1
    }
    private mutating func skipSpace() { while let b = peek, isSpace(b) { advance() } }
}
