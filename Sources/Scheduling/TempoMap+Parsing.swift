import SafeFiles

/// klick's tempo-map file format, read unchanged:
///
///     [label:] bars [meter] tempo[-tempo2 | ,tempo2,...] [pattern] [volume]   # comment
///
/// One section per line; blank lines and `#` comments are ignored; the meter defaults to 4/4, the
/// pattern to an accent on the first beat, the volume to 1. Errors name the file, line and
/// column.
extension TempoMap {
    /// Parses the text of a tempo-map file. `file` is only used in error messages.
    package init(parsing text: String, file: String? = nil) throws(TempoMapError) {
        var sections: [TempoSection] = []
        var lineNumber = 0
        for rawLine in text.split(separator: "\n", omittingEmptySubsequences: false) {
            lineNumber += 1
            do throws(TempoMapError) {
                var parser = TempoMapLineParser(line: Array(rawLine), number: lineNumber)
                if let section = try parser.parse() {
                    sections.append(section)
                }
            } catch {
                var e = error
                e.file = file
                throw e
            }
        }
        guard !sections.isEmpty else { throw TempoMapError("the tempo map has no sections", file: file) }
        do throws(TempoMapError) { try self.init(sections: sections) } catch {
            var e = error
            e.file = file
            throw e
        }
    }
}

/// One line of a tempo map, split into blank-separated tokens that remember their columns.
struct TempoMapLineParser {
    struct Token {
        var text: String
        /// 1-based column of the token's first character.
        var column: Int
    }

    let number: Int
    var tokens: [Token] = []
    var index = 0

    init(line: [Character], number: Int) {
        self.number = number
        var current = "", start = 0
        for (i, c) in line.enumerated() {
            if c == "#" { break }
            if c == " " || c == "\t" || c == "\r" {
                if !current.isEmpty { tokens.append(Token(text: current, column: start + 1)); current = "" }
            } else {
                if current.isEmpty { start = i }
                current.append(c)
            }
        }
        if !current.isEmpty { tokens.append(Token(text: current, column: start + 1)) }
    }

    func error(_ message: String, at column: Int?) -> TempoMapError {
        TempoMapError(message, line: number, column: column)
    }

    /// The section on this line, or nil for a blank or comment line.
    mutating func parse() throws(TempoMapError) -> TempoSection? {
        guard !tokens.isEmpty else { return nil }
        var label: String?
        // "label:" may stand alone or be glued to the bars ("intro:8").
        if let colon = tokens[0].text.firstIndex(of: ":") {
            let name = String(tokens[0].text[..<colon])
            let rest = String(tokens[0].text[tokens[0].text.index(after: colon)...])
            guard !name.isEmpty, name.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "_" || $0 == "-" }) else {
                throw error("a label can only hold letters, digits, _ and -, got \"\(name)\"", at: tokens[0].column)
            }
            label = name
            if rest.isEmpty {
                tokens.removeFirst()
            } else {
                tokens[0] = Token(text: rest, column: tokens[0].column + name.count + 1)
            }
            guard !tokens.isEmpty else { throw error("expected the number of bars after the label", at: endColumn) }
        }

        let barsToken = tokens[index]
        guard let bars = Int(barsToken.text), barsToken.text.allSatisfy(\.isASCIIDigit) else {
            throw error("expected the number of bars, got \"\(barsToken.text)\"", at: barsToken.column)
        }
        guard bars >= 1 && bars <= 1_000_000 else {
            throw error("the number of bars must be 1 to 1000000, got \(bars)", at: barsToken.column)
        }
        index += 1

        var meter = Meter.fourFour
        if let t = peek(), t.text.contains("/") {
            meter = try parseMeter(t)
            index += 1
        }

        guard let tempoToken = peek() else { throw error("expected a tempo after the \(index == 1 ? "bars" : "meter")", at: endColumn) }
        let tempo = try parseTempo(tempoToken, bars: bars, meter: meter)
        index += 1

        var pattern: AccentPattern?
        var volume = 1.0
        if let t = peek(), parseFloat(t.text) == nil {
            guard t.text.contains(where: { $0 == "X" || $0 == "x" || $0 == "." }) else {
                throw error("expected an accent pattern (of X, x and .) or a volume, got \"\(t.text)\"", at: t.column)
            }
            pattern = try parsePattern(t, meter: meter)
            index += 1
        }
        if let t = peek() {
            guard let v = parseFloat(t.text) else {
                throw error("expected a volume (a number like 0.5) or a comment, got \"\(t.text)\"", at: t.column)
            }
            guard v <= 16 else { throw error("volume must be between 0 and 16, got \(formatNumber(v))", at: t.column) }
            volume = v
            index += 1
        }
        if let t = peek() {
            throw error("unexpected \"\(t.text)\" after the \(pattern == nil && volume == 1 ? "tempo" : "volume"); start comments with #", at: t.column)
        }
        return TempoSection(label: label, bars: bars, meter: meter, tempo: tempo, pattern: pattern, volume: volume, line: number)
    }

    /// The column just after the last token (where something missing was expected).
    var endColumn: Int { tokens.last.map { $0.column + $0.text.count } ?? 1 }

    func peek() -> Token? { index < tokens.count ? tokens[index] : nil }

    func parseMeter(_ t: Token) throws(TempoMapError) -> Meter {
        let parts = t.text.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 2, let n = Int(parts[0]), let d = Int(parts[1]),
              parts[0].allSatisfy(\.isASCIIDigit), parts[1].allSatisfy(\.isASCIIDigit) else {
            throw error("expected a meter like 4/4 or 7/8, got \"\(t.text)\"", at: t.column)
        }
        do { return try Meter(beats: n, denominator: d) } catch {
            throw self.error(error.message, at: n < 1 || n > Meter.maxBeats ? t.column : t.column + parts[0].count + 1)
        }
    }

    func parseTempo(_ t: Token, bars: Int, meter: Meter) throws(TempoMapError) -> SectionTempo {
        func number(_ s: Substring, column: Int) throws(TempoMapError) -> Double {
            guard let v = parseFloat(String(s)) else {
                throw error("expected a tempo (quarter notes per minute), got \"\(s)\"", at: column)
            }
            guard TempoMap.tempoRange.contains(v) else { throw error(TempoMap.tempoMessage(v), at: column) }
            return v
        }
        if t.text.hasPrefix("-"), let v = Double(t.text) { throw error(TempoMap.tempoMessage(v), at: t.column) }
        if let dash = t.text.firstIndex(of: "-") {
            let a = t.text[..<dash], b = t.text[t.text.index(after: dash)...]
            let from = try number(a, column: t.column)
            let to = try number(b, column: t.column + a.count + 1)
            return from == to ? .constant(from) : .ramp(from: from, to: to)
        }
        if t.text.contains(",") {
            var tempos: [Double] = []
            var column = t.column
            for part in t.text.split(separator: ",", omittingEmptySubsequences: false) {
                tempos.append(try number(part, column: column))
                column += part.count + 1
            }
            let beats = bars * meter.beats
            guard tempos.count == beats else {
                throw error("a tempo per beat needs \(beats) tempos (\(bars) bars × \(meter.beats) beats), got \(tempos.count)", at: t.column)
            }
            return .perBeat(tempos)
        }
        return .constant(try number(t.text[...], column: t.column))
    }

    func parsePattern(_ t: Token, meter: Meter) throws(TempoMapError) -> AccentPattern {
        let pattern: AccentPattern
        do { pattern = try AccentPattern(parsing: t.text) } catch {
            throw self.error(error.message, at: t.column + (error.column ?? 1) - 1)
        }
        guard pattern.beats.count == meter.beats else {
            throw error("the pattern \"\(t.text)\" has \(pattern.beats.count) beats but the meter \(meter) has \(meter.beats)", at: t.column)
        }
        return pattern
    }
}

/// klick's FLOAT: digits with an optional fraction, or a fraction alone (`120`, `97.3`, `.5`);
/// no sign, no exponent.
func parseFloat(_ s: String) -> Double? {
    guard !s.isEmpty, s.allSatisfy({ $0.isASCIIDigit || $0 == "." }), s.filter({ $0 == "." }).count <= 1,
          s.contains(where: \.isASCIIDigit) else { return nil }
    return Double(s.hasPrefix(".") ? "0" + s : s)
}

extension Character {
    var isASCIIDigit: Bool { ("0"..."9").contains(self) }
}

/// The tempo given on the command line: one tempo (`120`), or klick's speed trainer
/// (`80-120/10`: from 80 to 120, one bpm every 10 bars on average).
package enum TempoSpec: Equatable, Sendable {
    case constant(Double)
    case trainer(from: Double, to: Double, barsPerBPM: Double)

    package init(parsing text: String) throws(TempoMapError) {
        let syntax = "expected a tempo like 120, or START-END/BARS for the speed trainer (80-120/10), got \"\(text)\""
        func number(_ s: Substring) throws(TempoMapError) -> Double {
            guard let v = parseFloat(String(s)) else { throw TempoMapError(syntax) }
            return v
        }
        func tempo(_ s: Substring) throws(TempoMapError) -> Double {
            if s.hasPrefix("-"), let v = Double(s) { throw TempoMapError(TempoMap.tempoMessage(v)) }
            let v = try number(s)
            guard TempoMap.tempoRange.contains(v) else { throw TempoMapError(TempoMap.tempoMessage(v)) }
            return v
        }
        if let dash = text.dropFirst().firstIndex(of: "-") {
            let rest = text[text.index(after: dash)...]
            guard let slash = rest.firstIndex(of: "/") else { throw TempoMapError(syntax) }
            let from = try tempo(text[..<dash]), to = try tempo(rest[..<slash])
            let bars = try number(rest[rest.index(after: slash)...])
            guard bars > 0 else { throw TempoMapError("the speed trainer needs a positive number of bars per bpm, got \(formatNumber(bars))") }
            self = .trainer(from: from, to: to, barsPerBPM: bars)
        } else {
            self = .constant(try tempo(text[...]))
        }
    }

    /// The tempo it starts at.
    package var initial: Double {
        switch self {
        case .constant(let t), .trainer(let t, _, _): t
        }
    }
}

extension TempoMap {
    /// The largest tempo map file read: 1 MB.
    package static let maximumFileSize = 1 << 20

    /// Reads and parses the tempo map file at `path` through `FileGate`: a regular file of at most
    /// 1 MB (with `root`, one under that directory). Errors name the file, and the line and
    /// column of a parse error. Control thread only.
    package init(contentsOfFile path: String, root: String? = nil) throws(TempoMapError) {
        let bytes: [UInt8]
        do {
            bytes = try FileGate.read(path, limit: Self.maximumFileSize, root: root)
        } catch .tooLarge(let size) {
            throw TempoMapError("the file is \(size >> 10) KB; a tempo map is at most 1 MB", file: path)
        } catch {
            throw TempoMapError("cannot read the tempo map (\(error.reason))", file: path)
        }
        guard let text = String(validating: bytes, as: UTF8.self) else {
            throw TempoMapError("cannot read the tempo map (not readable UTF-8 text)", file: path)
        }
        try self.init(parsing: text, file: path)
    }
}

extension TempoMapError {
    /// The error without the piece of the file it quotes (`got "…"`): for a reply to a message,
    /// which may name a file the sender could not otherwise read.
    package var withoutQuotedInput: TempoMapError {
        var copy = self
        let marker = Array(", got \"".utf8), bytes = Array(message.utf8)
        if bytes.count >= marker.count, let cut = (0...(bytes.count - marker.count)).first(where: { bytes[$0..<$0 + marker.count].elementsEqual(marker) }) {
            copy.message = String(decoding: bytes[..<cut], as: UTF8.self)
        }
        return copy
    }
}
