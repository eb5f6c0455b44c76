/// A JSON value together with where it sits in which file, so that every typed accessor can say
/// exactly what is wrong and where: `players[2].pan: expected a number between -1 and 1, got "left"`.
///
/// Format decoders read a document only through these accessors; each version of the patch format
/// is a set of calls to them, so a later version reuses the checks and their wording.
struct JSONNode: Sendable {
    let value: JSONValue
    let path: JSONPath
    let file: String

    /// An error located at this node.
    func error(_ message: String) -> PatchError {
        PatchError(file: file, path: path.description, message: message)
    }

    /// "expected …, got <this value>".
    func mismatch(expected: String) -> PatchError {
        error("expected \(expected), got \(value.summary)")
    }

    func object() throws(PatchError) -> JSONObjectNode {
        guard case .object(let members) = value else { throw mismatch(expected: "an object") }
        return JSONObjectNode(members: members, path: path, file: file)
    }

    /// An object whose keys must all be among `allowedKeys`.
    func object(allowedKeys: [String]) throws(PatchError) -> JSONObjectNode {
        let object = try object()
        try object.rejectUnknownKeys(allowed: allowedKeys)
        return object
    }

    func array() throws(PatchError) -> [JSONNode] {
        guard case .array(let elements) = value else { throw mismatch(expected: "an array") }
        return elements.enumerated().map { index, element in
            JSONNode(value: element, path: path.appending(index: index), file: file)
        }
    }

    func string() throws(PatchError) -> String {
        guard case .string(let string) = value else { throw mismatch(expected: "a string") }
        return string
    }

    func nonEmptyString() throws(PatchError) -> String {
        guard case .string(let string) = value, !string.isEmpty else {
            throw mismatch(expected: "a non-empty string")
        }
        return string
    }

    /// A number inside `range`. Booleans are not numbers.
    func number(in range: NumberRange = .any) throws(PatchError) -> Double {
        guard case .number(let number) = value, range.contains(number.value) else {
            throw mismatch(expected: "a number\(range.phrase)")
        }
        return number.value
    }

    /// A whole number inside `range`: `2` and `2.0` are integers, `1.5` is not.
    func integer(in range: NumberRange = .any) throws(PatchError) -> Int {
        guard case .number(let number) = value, range.contains(number.value),
              let integer = Int(exactly: number.value) else {
            throw mismatch(expected: "an integer\(range.phrase)")
        }
        return integer
    }
}

/// A JSON object being decoded: looks members up by key and names the missing and unknown ones.
struct JSONObjectNode: Sendable {
    let members: [JSONMember]
    let path: JSONPath
    let file: String

    /// An error located at the object itself.
    func error(_ message: String) -> PatchError {
        PatchError(file: file, path: path.description, message: message)
    }

    /// The members in file order, each as a node at `path.key`.
    var entries: [(key: String, node: JSONNode)] {
        members.map { ($0.key, JSONNode(value: $0.value, path: path.appending(key: $0.key), file: file)) }
    }

    func contains(_ key: String) -> Bool {
        members.contains { $0.key == key }
    }

    func optional(_ key: String) -> JSONNode? {
        guard let member = members.first(where: { $0.key == key }) else { return nil }
        return JSONNode(value: member.value, path: path.appending(key: key), file: file)
    }

    func required(_ key: String) throws(PatchError) -> JSONNode {
        guard let node = optional(key) else { throw error("missing required key \(JSONValue.quoted(key))") }
        return node
    }

    /// Rejects the first key (in file order) that is not in `allowed`; a misspelt key would
    /// otherwise be silently ignored.
    func rejectUnknownKeys(allowed: [String]) throws(PatchError) {
        for member in members where !allowed.contains(member.key) {
            throw PatchError(
                file: file, path: path.appending(key: member.key).description,
                message: "unknown key (expected one of: \(allowed.joined(separator: ", ")))")
        }
    }
}

/// The numbers a field accepts, and how a message phrases them ("between -1 and 1").
struct NumberRange: Sendable {
    var lower: Double?
    var lowerIsInclusive = true
    var upper: Double?

    /// Any finite number.
    static let any = NumberRange()

    /// `lower` ≤ x ≤ `upper`.
    static func between(_ lower: Double, _ upper: Double) -> NumberRange {
        NumberRange(lower: lower, upper: upper)
    }

    /// `lower` < x ≤ `upper`.
    static func above(_ lower: Double, atMost upper: Double) -> NumberRange {
        NumberRange(lower: lower, lowerIsInclusive: false, upper: upper)
    }

    /// `lower` ≤ x.
    static func atLeast(_ lower: Double) -> NumberRange {
        NumberRange(lower: lower)
    }

    func contains(_ value: Double) -> Bool {
        if let lower, lowerIsInclusive ? value < lower : value <= lower { return false }
        if let upper, value > upper { return false }
        return true
    }

    /// The range as the end of "expected a number…", with a leading space; empty for `.any`.
    var phrase: String {
        switch (lower, upper) {
        case let (lower?, upper?) where lowerIsInclusive:
            " between \(Self.format(lower)) and \(Self.format(upper))"
        case let (lower?, upper?):
            " greater than \(Self.format(lower)) and at most \(Self.format(upper))"
        case let (lower?, nil):
            lowerIsInclusive ? " of at least \(Self.format(lower))" : " greater than \(Self.format(lower))"
        case let (nil, upper?):
            " of at most \(Self.format(upper))"
        case (nil, nil):
            ""
        }
    }

    /// `1` rather than `1.0`, as a user would write the bound.
    private static func format(_ value: Double) -> String {
        if value == value.rounded(), abs(value) < 1e15 { return String(Int(value)) }
        return String(value)
    }
}
