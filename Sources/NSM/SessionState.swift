import Foundation
import SafeFiles

/// The value of one kept option, as the command line would give it; `unset` (JSON `null`) for an
/// option that is not given (so that a launch's value does not come back over a saved "none").
package enum SessionValue: Equatable, Sendable, Codable, CustomStringConvertible {
    case string(String)
    case number(Double)
    case bool(Bool)
    case unset

    package init(from decoder: any Decoder) throws {
        let c = try decoder.singleValueContainer()
        if c.decodeNil() { self = .unset; return }
        // Bool before Double: JSON's true is not the number 1, and 1 is not true.
        if let b = try? c.decode(Bool.self) { self = .bool(b); return }
        if let d = try? c.decode(Double.self) { self = .number(d); return }
        if let s = try? c.decode(String.self) { self = .string(s); return }
        throw DecodingError.typeMismatch(SessionValue.self, .init(codingPath: c.codingPath, debugDescription: "expected a string, a number, true, false or null"))
    }

    package func encode(to encoder: any Encoder) throws {
        var c = encoder.singleValueContainer()
        switch self {
        case .string(let s): try c.encode(s)
        case .number(let d): try c.encode(d)
        case .bool(let b): try c.encode(b)
        case .unset: try c.encodeNil()
        }
    }

    package var description: String {
        switch self {
        case .string(let s): "\"\(s)\""
        case .number(let d): d == d.rounded() && abs(d) < 1e15 ? String(Int64(d)) : String(d)
        case .bool(let b): "\(b)"
        case .unset: "null"
        }
    }
}

/// Why a state file could not be read or written: one line naming the file (and the JSON key).
package struct SessionStateError: Error, Equatable, Sendable, CustomStringConvertible {
    package let description: String
    package init(_ description: String) { self.description = description }
}

/// What `sampler play` or `sampler metronome` keeps in a session manager's session: which
/// command, and the options it keeps (the patch or tempo map, the tempo, the meter, …) as they
/// were when the session was saved. A small JSON document:
///
/// ```json
/// { "sampler": "session state", "version": 1, "command": "metronome",
///   "options": { "tempo": "132", "meter": "7/8", "map": null, "volume": 1 } }
/// ```
///
/// Which option names are valid is the command's business (it names an unknown one with the
/// file); this type only reads and writes the document. Control thread only.
package struct SessionState: Equatable, Sendable {
    package static let formatName = "session state"
    package static let version = 1
    /// A state file is a few hundred bytes; anything near this is not one.
    package static let sizeLimit = 256 << 10

    /// "play" or "metronome".
    package var command: String
    package var options: [String: SessionValue]

    package init(command: String, options: [String: SessionValue]) {
        self.command = command
        self.options = options
    }

    private struct Document: Codable {
        var sampler: String
        var version: Int
        var command: String
        var options: [String: SessionValue]
    }

    /// Parses a state document; `file` names it in errors.
    package init(parsing bytes: [UInt8], file: String) throws(SessionStateError) {
        let document: Document
        do {
            document = try JSONDecoder().decode(Document.self, from: Data(bytes))
        } catch let error as DecodingError {
            throw SessionStateError("\(file): \(Self.describe(error))")
        } catch {
            throw SessionStateError("\(file): not a sampler session state (\(error.localizedDescription))")
        }
        guard document.sampler == Self.formatName else {
            throw SessionStateError("\(file): sampler: expected \"\(Self.formatName)\", got \"\(document.sampler)\"")
        }
        guard document.version == Self.version else {
            throw SessionStateError("\(file): version: expected \(Self.version), got \(document.version) (written by another version of sampler)")
        }
        command = document.command
        options = document.options
    }

    /// The state kept at `path`, or nil when there is no file there yet (a new client).
    package static func load(path: String) throws(SessionStateError) -> SessionState? {
        let bytes: [UInt8]
        do {
            bytes = try FileGate.read(path, limit: sizeLimit)
        } catch .unreadable(let why) where why == "no such file" {
            return nil
        } catch {
            if case .tooLarge = error { throw SessionStateError("\(path): the file is larger than a session state may be (\(sizeLimit >> 10) KB)") }
            throw SessionStateError("\(path): cannot read the file (\(error.reason))")
        }
        return try SessionState(parsing: bytes, file: path)
    }

    /// The document, keys sorted (a saved session diffs well), ending with a newline.
    package func encoded() -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        // A dictionary of Codable values always encodes.
        var data = try! encoder.encode(Document(sampler: Self.formatName, version: Self.version, command: command, options: options))
        data.append(0x0A)
        return data
    }

    /// Writes the document to `path` atomically (a temporary file renamed over it), creating the
    /// directory it is in when missing.
    package func write(to path: String) throws(SessionStateError) {
        let url = URL(fileURLWithPath: path)
        do {
            try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            try encoded().write(to: url, options: .atomic)
        } catch {
            let reason = (error as NSError).localizedFailureReason ?? error.localizedDescription
            throw SessionStateError("\(path): cannot write the session state (\(reason))")
        }
    }

    /// A decoding error in a few words, with the JSON path it happened at.
    private static func describe(_ error: DecodingError) -> String {
        func path(_ keys: [any CodingKey]) -> String {
            keys.map { $0.intValue.map { "[\($0)]" } ?? $0.stringValue }.joined(separator: ".").replacingOccurrences(of: ".[", with: "[")
        }
        func at(_ keys: [any CodingKey]) -> String { keys.isEmpty ? "" : "\(path(keys)): " }
        switch error {
        case .dataCorrupted(let context) where context.codingPath.isEmpty:
            let why = (context.underlyingError as NSError?)?.userInfo[NSDebugDescriptionErrorKey] as? String ?? context.debugDescription
            return "not a sampler session state (invalid JSON: \(why.split(separator: "\n").first ?? ""))"
        case .dataCorrupted(let context):
            return "\(at(context.codingPath))\(context.debugDescription)"
        case .keyNotFound(let key, let context):
            return "\(at(context.codingPath))missing \"\(key.stringValue)\""
        case .typeMismatch(let type, let context):
            let what = type == SessionValue.self ? "a string, a number, true, false or null"
                : type == String.self ? "a string" : type == Int.self ? "a whole number" : "an object"
            return "\(at(context.codingPath))expected \(what)"
        case .valueNotFound(_, let context):
            return "\(at(context.codingPath))expected a value, got null"
        @unknown default:
            return "not a sampler session state"
        }
    }
}
