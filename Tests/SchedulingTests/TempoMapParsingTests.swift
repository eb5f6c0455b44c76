import Testing
@testable import Scheduling

/// klick's tempo-map format, read unchanged, and errors that say file:line:column.
@Suite struct TempoMapParsingTests {
    /// The example from klick's manual (/usr/share/doc/klick/manual.html).
    static let klickExample = """
    intro:    8 120           # play 8 measures at 120 bpm (4/4)
    verse1:   12 120 X.x.     # 12 measures at 120 bpm, playing only the 1st and 3rd beat
              4 120-140 X.x.  # gradually increase tempo to 140 bpm
    chorus1:  16 140
    bridge:   8 3/4 140 0.5   # change to 3/4 time, reduce volume
              8 3/4 140       # normal volume again
    verse2:   12 120          # back to 4/4 (implied)
    chorus2:  16 140          # jump to 140 bpm
    outro:    6 140
              2 140-80        # ritardando over the last 2 bars
    """

    @Test func readsKlicksManualExample() throws {
        let map = try TempoMap(parsing: Self.klickExample, file: "song.map")
        #expect(map.sections.count == 10)
        #expect(map.sections.map(\.label) == ["intro", "verse1", nil, "chorus1", "bridge", nil, "verse2", "chorus2", "outro", nil])
        #expect(map.sections.map(\.bars) == [8, 12, 4, 16, 8, 8, 12, 16, 6, 2])
        #expect(map.sections[1].pattern == AccentPattern([.accent, .silent, .normal, .silent]))
        #expect(map.sections[2].tempo == .ramp(from: 120, to: 140))
        #expect(map.sections[4].meter == (try Meter(beats: 3, denominator: 4)))
        #expect(map.sections[4].volume == 0.5)
        #expect(map.sections[5].volume == 1)
        #expect(map.sections[6].meter == .fourFour)
        #expect(map.sections[9].tempo == .ramp(from: 140, to: 80))
        #expect(map.sections.map(\.line) == Array(1...10))
        #expect(map.isFinite)
    }

    @Test func readsTempoPerBeatAndGluedLabels() throws {
        let map = try TempoMap(parsing: "a:1 3/4 100,110,120.5\n\n  # nothing\nb:2 6/8 90 X..x.. .25\n")
        #expect(map.sections[0].tempo == .perBeat([100, 110, 120.5]))
        #expect(map.sections[0].label == "a")
        #expect(map.sections[1].meter == (try Meter(beats: 6, denominator: 8)))
        #expect(map.sections[1].pattern?.description == "X..x..")
        #expect(map.sections[1].volume == 0.25)
        #expect(map.sections[1].line == 4)
    }

    @Test func equalRampEndsAreAConstantTempo() throws {
        #expect(try TempoMap(parsing: "4 120-120").sections[0].tempo == .constant(120))
    }

    @Test(arguments: [
        ("4 0/4 120", "m.map:1:3: the meter needs 1 to 256 beats per bar, got 0"),
        ("4 4/0 120", "m.map:1:5: the meter's note value must be 1 to 256, got 0"),
        ("4 120 X.y.", "m.map:1:9: unknown accent character \"y\" (use X for an accent, x for a normal beat, . for silence)"),
        ("4 3/4 120 X.x.", "m.map:1:11: the pattern \"X.x.\" has 4 beats but the meter 3/4 has 3"),
        ("4 0", "m.map:1:3: tempo must be between 1 and 1000 bpm, got 0"),
        ("4 -120", "m.map:1:3: tempo must be between 1 and 1000 bpm, got -120"),
        ("4 120-1001", "m.map:1:7: tempo must be between 1 and 1000 bpm, got 1001"),
        ("1 2/4 100,110,120", "m.map:1:7: a tempo per beat needs 2 tempos (1 bars × 2 beats), got 3"),
        ("four 120", "m.map:1:1: expected the number of bars, got \"four\""),
        ("0 120", "m.map:1:1: the number of bars must be 1 to 1000000, got 0"),
        ("4 120 X... 1 extra", "m.map:1:14: unexpected \"extra\" after the volume; start comments with #"),
        ("4 120 fast", "m.map:1:7: expected an accent pattern (of X, x and .) or a volume, got \"fast\""),
        ("4 120 X... loud", "m.map:1:12: expected a volume (a number like 0.5) or a comment, got \"loud\""),
        ("intro!: 4 120", "m.map:1:1: a label can only hold letters, digits, _ and -, got \"intro!\""),
        ("4 4/4", "m.map:1:6: expected a tempo after the meter"),
        ("4 12a", "m.map:1:3: expected a tempo (quarter notes per minute), got \"12a\""),
    ])
    func malformedLinesNameFileLineAndColumn(line: String, message: String) {
        #expect(throws: TempoMapError.self) { try TempoMap(parsing: line, file: "m.map") }
        do {
            _ = try TempoMap(parsing: line, file: "m.map")
        } catch {
            #expect(error.description == message)
        }
    }

    @Test func errorsCountLinesIncludingBlankOnes() {
        #expect(throws: TempoMapError("unknown accent character \"o\" (use X for an accent, x for a normal beat, . for silence)",
                                      file: "s.map", line: 3, column: 11)) {
            try TempoMap(parsing: "4 120\n# comment\n2 3/4 90 Xo.", file: "s.map")
        }
    }

    @Test func emptyMapIsAnError() {
        #expect(throws: TempoMapError("the tempo map has no sections", file: "e.map")) {
            try TempoMap(parsing: "# only a comment\n\n", file: "e.map")
        }
    }

    @Test func commandLineTempoIsATempoOrATrainer() throws {
        #expect(try TempoSpec(parsing: "120") == .constant(120))
        #expect(try TempoSpec(parsing: "97.3") == .constant(97.3))
        #expect(try TempoSpec(parsing: "80-120/10") == .trainer(from: 80, to: 120, barsPerBPM: 10))
        #expect(throws: TempoMapError("tempo must be between 1 and 1000 bpm, got 0")) { try TempoSpec(parsing: "0") }
        #expect(throws: TempoMapError("tempo must be between 1 and 1000 bpm, got -5")) { try TempoSpec(parsing: "-5") }
        #expect(throws: TempoMapError("tempo must be between 1 and 1000 bpm, got 1001")) { try TempoSpec(parsing: "1001") }
        #expect(throws: TempoMapError.self) { try TempoSpec(parsing: "fast") }
        #expect(throws: TempoMapError.self) { try TempoSpec(parsing: "80-120") }
        #expect(throws: TempoMapError("the speed trainer needs a positive number of bars per bpm, got 0")) {
            try TempoSpec(parsing: "80-120/0")
        }
    }

    @Test func metersAndPatternsRejectNonsense() {
        #expect(throws: TempoMapError("the meter needs 1 to 256 beats per bar, got 0")) { try Meter(parsing: "0/4") }
        #expect(throws: TempoMapError("the meter's note value must be 1 to 256, got 0")) { try Meter(parsing: "4/0") }
        #expect(throws: TempoMapError("expected a meter like 4/4 or 7/8, got \"4\"")) { try Meter(parsing: "4") }
        #expect(throws: TempoMapError("unknown accent character \"A\" (use X for an accent, x for a normal beat, . for silence)", column: 2)) {
            try AccentPattern(parsing: "XAx")
        }
    }

    @Test func labelsCountInAndMultiplierTransformTheMap() throws {
        let map = try TempoMap(parsing: Self.klickExample)
        let chorus = try map.starting(atLabel: "chorus1")
        #expect(chorus.sections.count == 7)
        #expect(chorus.sections[0].tempo == .constant(140))
        #expect(throws: TempoMapError("no section is labelled \"coda\" (labels: intro, verse1, chorus1, bridge, verse2, chorus2, outro)")) {
            try map.starting(atLabel: "coda")
        }
        let counted = try chorus.withCountIn(bars: 2)
        #expect(counted.sections[0] == TempoSection(bars: 2, tempo: .constant(140), volume: 0.66, isCountIn: true))
        #expect(counted.countInSections == 1)
        let twoBeats = try chorus.withCountIn(bars: 0)
        #expect(twoBeats.sections[0].meter == (try Meter(beats: 2, denominator: 4)))
        #expect(twoBeats.sections[0].pattern == AccentPattern([.normal, .normal]))
        let faster = try map.scaled(by: 1.5)
        #expect(faster.sections[2].tempo == .ramp(from: 180, to: 210))
        #expect(throws: TempoMapError.self) { try map.scaled(by: 10) }
    }
}
