@testable import Patches
import Testing

@Suite struct JSONParserTests {
    private func parse(_ text: String) throws(JSONSyntaxError) -> JSONValue {
        try JSONParser.parse(Array(text.utf8))
    }

    private func syntaxError(_ text: String) -> JSONSyntaxError? {
        syntaxError(bytes: Array(text.utf8))
    }

    private func syntaxError(bytes: [UInt8]) -> JSONSyntaxError? {
        do {
            _ = try JSONParser.parse(bytes)
            return nil
        } catch {
            return error
        }
    }

    @Test func parsesEveryKindOfValueKeepingKeyOrder() throws {
        let value = try parse(#"{"z": [1, -2.5e1, true, false, null], "a": "x\"\u00e9\ud83e\udd41\n"}"#)
        let number = { (text: String, value: Double) in JSONValue.number(JSONNumber(value: value, literal: text)) }
        #expect(value == .object([
            JSONMember(key: "z", value: .array([number("1", 1), number("-2.5e1", -25), .bool(true), .bool(false), .null])),
            JSONMember(key: "a", value: .string("x\"é🥁\n")),
        ]))
    }

    @Test func trailingCommaIsAnError() {
        #expect(syntaxError("{\n  \"a\": 1,\n}") == JSONSyntaxError(
            line: 3, column: 1, message: "expected a key in double quotes, got '}' (JSON allows no comma before '}')"))
        #expect(syntaxError("[1, 2,]") == JSONSyntaxError(
            line: 1, column: 7, message: "expected a value, got ']' (JSON allows no comma before ']')"))
    }

    @Test func duplicateKeyIsAnError() {
        #expect(syntaxError("{\"kick\": 1,\n \"kick\": 2}") == JSONSyntaxError(line: 2, column: 2, message: #"duplicate key "kick""#))
    }

    @Test func columnsCountCharactersNotBytes() {
        #expect(syntaxError(#"{"é": ?}"#) == JSONSyntaxError(line: 1, column: 7, message: "expected a value, got '?'"))
    }

    @Test func misspeltLiteralShowsTheWord() {
        #expect(syntaxError("[True]") == JSONSyntaxError(line: 1, column: 2, message: "expected a value, got 'True'"))
    }

    @Test func commentsAreNamed() {
        #expect(syntaxError("{\n  // tempo\n}")?.message == "expected a key in double quotes, got a comment (JSON has no comments)")
    }

    @Test func unterminatedStringPointsAtItsStart() {
        #expect(syntaxError("{\"a\": \"abc\n}") == JSONSyntaxError(
            line: 1, column: 7, message: "unterminated string (a string cannot span lines; write \\n for a line break)"))
    }

    @Test func truncatedDocument() {
        #expect(syntaxError("{\"a\": [1, 2") == JSONSyntaxError(line: 1, column: 12, message: "expected ',' or ']', got the end of the file"))
        #expect(syntaxError("") == JSONSyntaxError(line: 1, column: 1, message: "expected a value, got the end of the file"))
    }

    @Test func textAfterTheValue() {
        #expect(syntaxError("{} {}") == JSONSyntaxError(
            line: 1, column: 4, message: "expected the end of the file after the JSON value, got '{'"))
    }

    @Test func numbersFollowTheJSONGrammar() {
        #expect(syntaxError("[01]")?.message == "numbers cannot have leading zeros")
        #expect(syntaxError("[1.]")?.message == "expected a digit after '.', got ']'")
        #expect(syntaxError("[.5]")?.message == "expected a value, got '.'")
        #expect(syntaxError("[1e999]")?.message == "the number 1e999 is too large")
    }

    @Test func invalidUTF8IsLocated() {
        #expect(syntaxError(bytes: [0x5B, 0x0A, 0x22, 0xFF, 0x22, 0x5D])
            == JSONSyntaxError(line: 2, column: 2, message: "the file is not UTF-8 text"))
    }

    @Test func byteOrderMarkIsSkipped() throws {
        #expect(try JSONParser.parse([0xEF, 0xBB, 0xBF] + Array("[]".utf8)) == .array([]))
    }

    @Test func deepNestingIsRejected() {
        let text = String(repeating: "[", count: JSONParser.maximumDepth + 1)
        #expect(syntaxError(text)?.message == "arrays and objects nest deeper than 256 levels")
    }

    @Test func invalidEscape() {
        #expect(syntaxError(#"["\q"]"#) == JSONSyntaxError(line: 1, column: 3, message: #"invalid escape '\q' in a string"#))
        #expect(syntaxError(#"["\ud83e"]"#)?.message == #"unpaired UTF-16 surrogate in a \u escape"#)
    }
}
