/// A location inside a JSON document, written the way a user would point at it: `players[2].pan`.
struct JSONPath: Hashable, Sendable, CustomStringConvertible {
    enum Component: Hashable, Sendable {
        case key(String)
        case index(Int)
    }

    private(set) var components: [Component] = []

    /// The document's root (described as the empty string).
    static let root = JSONPath()

    func appending(key: String) -> JSONPath {
        var copy = self
        copy.components.append(.key(key))
        return copy
    }

    func appending(index: Int) -> JSONPath {
        var copy = self
        copy.components.append(.index(index))
        return copy
    }

    var description: String {
        // Built in place: a patch's every sample is named by its path.
        var text = ""
        text.reserveCapacity(64)
        for component in components {
            switch component {
            case .index(let index):
                text += "["
                text += String(index)
                text += "]"
            case .key(let key) where Self.isPlainKey(key):
                if !text.isEmpty { text += "." }
                text += key
            case .key(let key):
                // Keys with spaces or dots would make the dotted form ambiguous.
                text += "[\(JSONValue.quoted(key))]"
            }
        }
        return text
    }

    private static func isPlainKey(_ key: String) -> Bool {
        // ASCII keys (nearly all) without the Unicode property tables.
        if key.utf8.allSatisfy({ $0 < 0x80 }) {
            func letter(_ c: UInt8) -> Bool { (c >= 0x61 && c <= 0x7A) || (c >= 0x41 && c <= 0x5A) || c == 0x5F }
            guard let first = key.utf8.first, letter(first) else { return false }
            return key.utf8.allSatisfy { letter($0) || $0 == 0x2D || ($0 >= 0x30 && $0 <= 0x39) }
        }
        guard let first = key.unicodeScalars.first, first == "_" || first.properties.isAlphabetic else {
            return false
        }
        return key.unicodeScalars.allSatisfy { $0 == "_" || $0 == "-" || $0.properties.isAlphabetic || ("0"..."9").contains($0) }
    }
}
