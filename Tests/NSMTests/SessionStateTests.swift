import Foundation
import NSM
import Testing

/// The state file a command keeps in an NSM session: read back as written, and every bad file
/// refused with one line naming it (and the key, where there is one).
@Suite struct SessionStateTests {
    func parse(_ text: String) throws(SessionStateError) -> SessionState {
        try SessionState(parsing: Array(text.utf8), file: "client.json")
    }

    func error(_ text: String) -> String? {
        do { _ = try parse(text); return nil } catch { return error.description }
    }

    @Test func aWrittenStateReadsBackTheSame() throws {
        let state = SessionState(command: "metronome", options: [
            "tempo": .string("132"), "meter": .string("7/8"), "map": .unset, "volume": .number(0.5), "song": .bool(true),
        ])
        let read = try SessionState(parsing: Array(state.encoded()), file: "x.json")
        #expect(read == state)
        let text = String(decoding: state.encoded(), as: UTF8.self)
        #expect(text.contains("\"map\" : null"), "unset options are written as null: \(text)")
        #expect(text.hasSuffix("}\n"))
    }

    @Test func trueIsNotOneAndOneIsNotTrue() throws {
        let state = try parse(#"{"sampler": "session state", "version": 1, "command": "play", "options": {"a": true, "b": 1, "c": "1"}}"#)
        #expect(state.options == ["a": .bool(true), "b": .number(1), "c": .string("1")])
    }

    @Test func invalidJSONIsRefusedNamingTheFile() {
        let message = error("{\"sampler\": ")
        #expect(message?.hasPrefix("client.json: not a sampler session state (invalid JSON") == true, "\(message ?? "accepted")")
        #expect(message?.contains("\n") == false)
    }

    @Test func aMissingKeyIsNamed() {
        #expect(error(#"{"sampler": "session state", "version": 1, "options": {}}"#) == "client.json: missing \"command\"")
    }

    @Test func aWrongTypeIsNamedWithItsPath() {
        #expect(error(#"{"sampler": "session state", "version": 1, "command": "play", "options": {"tempo": [120]}}"#)
                == "client.json: options.tempo: expected a string, a number, true, false or null")
        #expect(error(#"{"sampler": "session state", "version": "1", "command": "play", "options": {}}"#)
                == "client.json: version: expected a whole number")
    }

    @Test func anotherDocumentOrVersionIsRefused() {
        #expect(error(#"{"sampler": "patch", "version": 1, "command": "play", "options": {}}"#)
                == "client.json: sampler: expected \"session state\", got \"patch\"")
        #expect(error(#"{"sampler": "session state", "version": 2, "command": "play", "options": {}}"#)
                == "client.json: version: expected 1, got 2 (written by another version of sampler)")
    }

    @Test func noFileIsANewClientAndADirectoryIsAnError() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("nsm-state-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        #expect(try SessionState.load(path: dir.appendingPathComponent("none.json").path) == nil)
        #expect(throws: SessionStateError("\(dir.path): cannot read the file (it is a directory)")) {
            try SessionState.load(path: dir.path)
        }
        let big = dir.appendingPathComponent("big.json")
        try Data(repeating: 0x20, count: SessionState.sizeLimit + 1).write(to: big)
        #expect(throws: SessionStateError("\(big.path): the file is larger than a session state may be (256 KB)")) {
            try SessionState.load(path: big.path)
        }
    }

    @Test func writeCreatesTheDirectoryAndReplacesTheFile() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("nsm-state-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: dir) }
        let path = dir.appendingPathComponent("session/client.json").path
        try SessionState(command: "play", options: ["tempo": .number(96)]).write(to: path)
        try SessionState(command: "play", options: ["tempo": .number(100)]).write(to: path)
        #expect(try SessionState.load(path: path)?.options == ["tempo": .number(100)])
    }
}
