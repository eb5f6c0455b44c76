/// A time signature: `beats` beats per bar, each a `denominator`th note (7/8: seven eighths).
package struct Meter: Hashable, Sendable, CustomStringConvertible {
    package var beats: Int
    package var denominator: Int

    /// Most beats per bar and largest denominator accepted (far beyond any real use; they keep
    /// every product of counts well inside 64-bit and Double-exact integers).
    package static let maxBeats = 256
    package static let maxDenominator = 256

    /// A meter; both parts must be 1…256 (there is no meter with zero beats or a zero note value).
    package init(beats: Int, denominator: Int) throws(TempoMapError) {
        guard (1...Meter.maxBeats).contains(beats) else {
            throw TempoMapError("the meter needs 1 to \(Meter.maxBeats) beats per bar, got \(beats)")
        }
        guard (1...Meter.maxDenominator).contains(denominator) else {
            throw TempoMapError("the meter's note value must be 1 to \(Meter.maxDenominator), got \(denominator)")
        }
        self.beats = beats
        self.denominator = denominator
    }

    /// Parses `N/D` ("7/8").
    package init(parsing text: String) throws(TempoMapError) {
        let parts = text.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 2, let n = Int(parts[0]), let d = Int(parts[1]) else {
            throw TempoMapError("expected a meter like 4/4 or 7/8, got \"\(text)\"")
        }
        try self.init(beats: n, denominator: d)
    }

    package static let fourFour = try! Meter(beats: 4, denominator: 4)

    package var description: String { "\(beats)/\(denominator)" }
}

/// What one beat of a bar plays.
package enum BeatKind: Hashable, Sendable {
    /// `X`: the accented click.
    case accent
    /// `x`: the normal click.
    case normal
    /// `.`: nothing.
    case silent
}

/// Accents per beat, written as in klick: `X` accent, `x` normal, `.` silent ("X.x.").
package struct AccentPattern: Hashable, Sendable, CustomStringConvertible {
    package var beats: [BeatKind]

    package init(_ beats: [BeatKind]) { self.beats = beats }

    /// Parses a pattern; an unknown character is an error naming its 1-based position (the
    /// error's `column`, relative to the start of `text`).
    package init(parsing text: String) throws(TempoMapError) {
        guard !text.isEmpty else { throw TempoMapError("an accent pattern needs at least one of X, x or .") }
        var beats: [BeatKind] = []
        for (i, c) in text.enumerated() {
            switch c {
            case "X": beats.append(.accent)
            case "x": beats.append(.normal)
            case ".": beats.append(.silent)
            default:
                throw TempoMapError("unknown accent character \"\(c)\" (use X for an accent, x for a normal beat, . for silence)",
                                    column: i + 1)
            }
        }
        self.beats = beats
    }

    /// klick's default: the first beat accented, the others normal.
    package static func standard(beats: Int) -> AccentPattern {
        AccentPattern([.accent] + Array(repeating: .normal, count: max(0, beats - 1)))
    }

    package var description: String {
        String(beats.map { $0 == .accent ? "X" : $0 == .normal ? "x" : "." })
    }
}

/// How the tempo moves through a section. Tempos are in quarter notes per minute, as in klick,
/// whatever the meter.
package enum SectionTempo: Hashable, Sendable {
    /// One tempo for the whole section.
    case constant(Double)
    /// From `from` at the section's first beat to `to` at its end, changing linearly with the
    /// beat position (klick's `tempo1-tempo2`).
    case ramp(from: Double, to: Double)
    /// A tempo for each beat of the section (klick's `t1,t2,…`).
    case perBeat([Double])

    /// The tempo the section starts with.
    package var initial: Double {
        switch self {
        case .constant(let t), .ramp(let t, _): t
        case .perBeat(let ts): ts[0]
        }
    }

    func scaled(by factor: Double) -> SectionTempo {
        switch self {
        case .constant(let t): .constant(t * factor)
        case .ramp(let a, let b): .ramp(from: a * factor, to: b * factor)
        case .perBeat(let ts): .perBeat(ts.map { $0 * factor })
        }
    }
}

/// One line of a tempo map: a number of bars in one meter, tempo, pattern and volume.
package struct TempoSection: Hashable, Sendable {
    package var label: String?
    /// Bars in the section; nil plays it for ever (only the last section may be endless).
    package var bars: Int?
    package var meter: Meter
    package var tempo: SectionTempo
    /// Accents per beat (as many as the meter's beats); nil is the standard pattern.
    package var pattern: AccentPattern?
    /// Linear volume of the section's clicks (1 = as the sounds are).
    package var volume: Double
    /// True for the count-in that `TempoMap.withCountIn` adds.
    package var isCountIn: Bool
    /// The line of the tempo-map file the section came from, for messages.
    package var line: Int?

    package init(label: String? = nil, bars: Int?, meter: Meter = .fourFour, tempo: SectionTempo,
                pattern: AccentPattern? = nil, volume: Double = 1, isCountIn: Bool = false, line: Int? = nil) {
        self.label = label
        self.bars = bars
        self.meter = meter
        self.tempo = tempo
        self.pattern = pattern
        self.volume = volume
        self.isCountIn = isCountIn
        self.line = line
    }

    /// Beats in the section (nil when endless).
    package var beatCount: Int? { bars.map { $0 * meter.beats } }

    /// What beat `index` of a bar plays.
    package func kind(ofBeat index: Int) -> BeatKind {
        if let pattern { return pattern.beats[index] }
        return index == 0 ? .accent : .normal
    }
}

/// A sequence of sections played one after the other: klick's tempo map. Pure value; the frames
/// it lands on come from `TempoMapTiming`.
package struct TempoMap: Hashable, Sendable {
    /// Tempos accepted anywhere (quarter notes per minute). The lower bound keeps every beat
    /// length a sane number of frames (there is no use for a beat a minute long).
    package static let tempoRange: ClosedRange<Double> = 1...1000

    package var sections: [TempoSection]

    /// A map; checks every section (see `validate`).
    package init(sections: [TempoSection]) throws(TempoMapError) {
        self.sections = sections
        try validate()
    }

    /// Endless clicks at one tempo and meter.
    package static func constant(bpm: Double, meter: Meter = .fourFour, pattern: AccentPattern? = nil,
                                volume: Double = 1) throws(TempoMapError) -> TempoMap {
        try TempoMap(sections: [TempoSection(bars: nil, meter: meter, tempo: .constant(bpm), pattern: pattern, volume: volume)])
    }

    /// klick's speed trainer (`START-TARGET/BARS` on its command line): the tempo moves linearly
    /// from `start` to `target` over `ceil(barsPerBPM × |target − start|)` bars (on average one
    /// bpm every `barsPerBPM` bars), then stays at `target` for ever.
    package static func trainer(from start: Double, to target: Double, barsPerBPM: Double, meter: Meter = .fourFour,
                               pattern: AccentPattern? = nil, volume: Double = 1) throws(TempoMapError) -> TempoMap {
        guard barsPerBPM > 0, barsPerBPM.isFinite else {
            throw TempoMapError("the speed trainer needs a positive number of bars per bpm, got \(barsPerBPM)")
        }
        let rampBars = (barsPerBPM * abs(target - start)).rounded(.up)
        guard rampBars <= 1_000_000 else { throw TempoMapError("the speed trainer's ramp is too long (\(Int(rampBars)) bars)") }
        var sections: [TempoSection] = []
        if rampBars >= 1 {
            sections.append(TempoSection(bars: Int(rampBars), meter: meter, tempo: .ramp(from: start, to: target),
                                         pattern: pattern, volume: volume))
        }
        sections.append(TempoSection(bars: nil, meter: meter, tempo: .constant(target), pattern: pattern, volume: volume))
        return try TempoMap(sections: sections)
    }

    /// Checks what the parser cannot: positive bars, tempos in range, patterns as long as the
    /// meter, per-beat tempos as many as the beats, only the last section endless. Errors name
    /// the section's file line when it has one.
    package func validate() throws(TempoMapError) {
        guard !sections.isEmpty else { throw TempoMapError("the tempo map has no sections") }
        for (i, s) in sections.enumerated() {
            func fail(_ message: String) -> TempoMapError { TempoMapError(message, line: s.line) }
            if let bars = s.bars, !(1...1_000_000).contains(bars) {
                throw fail("a section needs 1 to 1000000 bars, got \(bars)")
            }
            if s.bars == nil && i != sections.count - 1 { throw fail("only the last section can play for ever") }
            let tempos: [Double]
            switch s.tempo {
            case .constant(let t): tempos = [t]
            case .ramp(let a, let b): tempos = [a, b]
            case .perBeat(let ts):
                tempos = ts
                guard let beats = s.beatCount, ts.count == beats else {
                    throw fail("a tempo per beat needs \(s.beatCount.map(String.init) ?? "a finite number of") tempos (bars × beats), got \(ts.count)")
                }
            }
            for t in tempos where !(t.isFinite && TempoMap.tempoRange.contains(t)) {
                throw fail(TempoMap.tempoMessage(t))
            }
            if let p = s.pattern, p.beats.count != s.meter.beats {
                throw fail("the pattern \"\(p)\" has \(p.beats.count) beats but the meter \(s.meter) has \(s.meter.beats)")
            }
            if !(s.volume.isFinite && s.volume >= 0 && s.volume <= 16) {
                throw fail("volume must be between 0 and 16, got \(formatNumber(s.volume))")
            }
        }
    }

    /// The message for a tempo outside `tempoRange`.
    package static func tempoMessage(_ t: Double) -> String {
        "tempo must be between 1 and 1000 bpm, got \(formatNumber(t))"
    }

    /// True when the map ends (its last section has a number of bars).
    package var isFinite: Bool { sections.last?.bars != nil }

    /// The map from the section labelled `label` on (klick's `-l`).
    package func starting(atLabel label: String) throws(TempoMapError) -> TempoMap {
        guard let i = sections.firstIndex(where: { $0.label == label }) else {
            let known = sections.compactMap(\.label)
            throw TempoMapError("no section is labelled \"\(label)\"" + (known.isEmpty ? " (the map has no labels)" : " (labels: \(known.joined(separator: ", ")))"))
        }
        var copy = self
        copy.sections.removeFirst(i)
        return copy
    }

    /// Every tempo multiplied by `factor` (klick's `-x`).
    package func scaled(by factor: Double) throws(TempoMapError) -> TempoMap {
        guard factor > 0, factor.isFinite else { throw TempoMapError("the tempo multiplier must be a positive number, got \(formatNumber(factor))") }
        var copy = self
        for i in copy.sections.indices { copy.sections[i].tempo = copy.sections[i].tempo.scaled(by: factor) }
        try copy.validate()
        return copy
    }

    /// Tempos read as counting the meter's note value instead of quarter notes (`--beat-unit
    /// denominator`): 200 in 7/8 then means 200 eighths per minute.
    package func tempoCountingDenominators() throws(TempoMapError) -> TempoMap {
        var copy = self
        for i in copy.sections.indices {
            copy.sections[i].tempo = copy.sections[i].tempo.scaled(by: 4 / Double(copy.sections[i].meter.denominator))
        }
        try copy.validate()
        return copy
    }

    /// The map with `bars` bars of count-in before it, in the first section's meter, pattern and
    /// starting tempo, at 0.66 of its volume (as klick's pre-roll). `bars == 0` counts in two
    /// beats instead of a bar (klick's `-c 0`).
    package func withCountIn(bars: Int) throws(TempoMapError) -> TempoMap {
        guard bars >= 0 && bars <= 1000 else { throw TempoMapError("the count-in must be 0 to 1000 bars, got \(bars)") }
        let first = sections[0]
        let countIn: TempoSection
        if bars == 0 {
            let meter = try Meter(beats: 2, denominator: first.meter.denominator)
            countIn = TempoSection(bars: 1, meter: meter, tempo: .constant(first.tempo.initial),
                                   pattern: AccentPattern([.normal, .normal]), volume: first.volume * 0.66, isCountIn: true)
        } else {
            countIn = TempoSection(bars: bars, meter: first.meter, tempo: .constant(first.tempo.initial),
                                   pattern: first.pattern, volume: first.volume * 0.66, isCountIn: true)
        }
        return try TempoMap(sections: [countIn] + sections)
    }

    /// The number of count-in sections at the start.
    package var countInSections: Int { sections.prefix { $0.isCountIn }.count }
}

/// Why a tempo map, meter, pattern or tempo could not be used; names the file, line and column
/// when it came from a file. One line.
package struct TempoMapError: Error, Equatable, CustomStringConvertible {
    package var message: String
    package var file: String?
    package var line: Int?
    package var column: Int?

    package init(_ message: String, file: String? = nil, line: Int? = nil, column: Int? = nil) {
        self.message = message
        self.file = file
        self.line = line
        self.column = column
    }

    /// `file:line:column: message` with whatever parts are known.
    package var description: String {
        var place = ""
        if let file { place = file }
        if let line {
            place += (place.isEmpty ? "line \(line)" : ":\(line)")
            if let column { place += ":\(column)" }
        }
        return place.isEmpty ? message : "\(place): \(message)"
    }
}

/// `120`, `97.3`: no trailing `.0`.
func formatNumber(_ x: Double) -> String {
    x == x.rounded() && abs(x) < 1e15 ? String(Int64(x)) : String(x)
}
