import Foundation
import JACKBackend
import JACKTestSupport
import SamplerCore
import Testing
@testable import MetronomeKit
import ProgramHost
import Sync
@testable import Scheduling

/// Built-in sounds, command-line options, keys and JACK bar/beat/tick of the metronome.
@Suite struct MetronomeOptionsTests {
    @Test(arguments: ClickTimbre.allCases)
    func builtInClicksPeakOnTheirFirstSampleAndDieOut(timbre: ClickTimbre) {
        for accent in [true, false] {
            let x = ClickSounds.samples(timbre, accent: accent, sampleRate: 48000)
            let peak = x.map(abs).max()!
            #expect(x[0] == peak, "\(timbre) accent \(accent): the attack is the first sample")
            #expect(abs(x[0] - (accent ? 1 : 0.7)) < 1e-6)
            #expect(x.suffix(10).allSatisfy { abs($0) < 1.5e-3 }, "ends at −60 dB")
            #expect(x.count < 48000 / 5)
        }
        // Accents and normal beats are different sounds.
        #expect(ClickSounds.samples(timbre, accent: true, sampleRate: 48000) != ClickSounds.samples(timbre, accent: false, sampleRate: 48000).map { $0 / 0.7 })
    }

    @Test func timbresDiffer() {
        #expect(ClickSounds.samples(.click, accent: true, sampleRate: 48000) != ClickSounds.samples(.woodblock, accent: true, sampleRate: 48000))
        // The woodblock rings longer.
        #expect(ClickSounds.samples(.woodblock, accent: false, sampleRate: 44100).count > 3 * ClickSounds.samples(.click, accent: false, sampleRate: 44100).count)
    }

    func request(_ words: (inout MetronomeRequest) -> Void) -> MetronomeRequest {
        var r = MetronomeRequest()
        words(&r)
        return r
    }

    @Test func badOptionsAreOneSentenceNamingTheOption() {
        let cases: [(MetronomeRequest, String)] = [
            (request { $0.tempo = "0" }, "tempo must be between 1 and 1000 bpm, got 0"),
            (request { $0.tempo = "1000.5" }, "tempo must be between 1 and 1000 bpm, got 1000.5"),
            (request { $0.tempo = "80-2000/4" }, "tempo must be between 1 and 1000 bpm, got 2000"),
            (request { $0.meter = "0/4" }, "--meter: the meter needs 1 to 256 beats per bar, got 0"),
            (request { $0.meter = "4/0" }, "--meter: the meter's note value must be 1 to 256, got 0"),
            (request { $0.accents = "X.q." }, "--accents: unknown accent character \"q\" (use X for an accent, x for a normal beat, . for silence)"),
            (request { $0.accents = "X.x" }, "--accents \"X.x\" has 3 beats but the meter 4/4 has 4"),
            (request { $0.subdivide = 0 }, "--subdivide must be 1 to 16 notes per beat, got 0"),
            (request { $0.beatUnit = "half" }, "--beat-unit must be quarter or denominator, got \"half\""),
            (request { $0.multiply = 0 }, "--multiply must be a number greater than 0 and at most 100, got 0"),
            (request { $0.tempo = "600"; $0.multiply = 2 }, "tempo must be between 1 and 1000 bpm, got 1200 (after --multiply and --beat-unit)"),
            (request { $0.timbre = "cowbell" }, "--timbre must be click or woodblock, got \"cowbell\""),
            (request { $0.volume = -1 }, "--volume must be between 0 and 16, got -1"),
            (request { $0.pan = 2 }, "--pan must be between -1 and 1, got 2"),
            (request { $0.tempo = "120"; $0.mapFile = "a.map" }, "give either a TEMPO or --map, not both"),
            (request { $0.label = "chorus" }, "--label needs --map (labels name sections of a tempo map)"),
            (request { $0.mapFile = "a.map"; $0.meter = "3/4" }, "--meter and --accents cannot be used with --map (each section of the map sets its own)"),
            (request { $0.countIn = -1 }, "--count-in must be 0 to 1000 bars (0: two beats), got -1"),
        ]
        for (r, message) in cases {
            #expect(throws: MetronomeOptionError(description: message)) { try r.validate() }
        }
    }

    @Test func tempoMapFilesReportFileLineAndColumn() throws {
        let dir = try temporaryDirectory()
        let file = dir.appendingPathComponent("song.map").path
        try "intro: 4 120\n\n  verse: 8 7/0 120\n".write(toFile: file, atomically: true, encoding: .utf8)
        let r = request { $0.mapFile = file }
        #expect(throws: TempoMapError("the meter's note value must be 1 to 256, got 0", file: file, line: 3, column: 14)) {
            try r.makeSettings()
        }
        #expect(throws: TempoMapError("cannot read the tempo map (no such file)", file: "/nonexistent/x.map")) {
            try request { $0.mapFile = "/nonexistent/x.map" }.makeSettings()
        }
    }

    @Test func unreadableSoundFilesNameTheOptionAndFile() throws {
        let dir = try temporaryDirectory()
        let junk = dir.appendingPathComponent("junk.wav").path
        try Data(repeating: 7, count: 1000).write(to: URL(fileURLWithPath: junk))
        var s = try request { $0.tempo = "100" }.makeSettings()
        s.soundFile = "/nonexistent/click.wav"
        #expect(throws: SamplerError("--sound: /nonexistent/click.wav: no such file")) { try MetronomeInstrument.checkSoundFiles(s) }
        s.soundFile = nil
        s.accentSoundFile = junk
        #expect(throws: SamplerError.self) { try MetronomeInstrument.checkSoundFiles(s) }
        do { try MetronomeInstrument.checkSoundFiles(s) } catch {
            #expect("\(error)".hasPrefix("--accent-sound: \(junk): "))
        }
    }

    @Test func settingsCarryCountInLabelMultiplierAndBeatUnit() throws {
        let dir = try temporaryDirectory()
        let file = dir.appendingPathComponent("song.map").path
        try "intro: 2 100\nchorus: 4 3/4 120 X.x 0.5\n".write(toFile: file, atomically: true, encoding: .utf8)
        let s = try request {
            $0.mapFile = file
            $0.label = "chorus"
            $0.countIn = 1
            $0.multiply = 1.5
        }.makeSettings()
        #expect(s.map.sections.count == 2)
        #expect(s.map.sections[0].isCountIn && s.map.sections[0].tempo == .constant(180))
        #expect(s.map.sections[1].tempo == .constant(180))
        #expect(s.map.sections[1].volume == 0.5)
        #expect(!s.allowsTempoChanges)
        let eighths = try request { $0.tempo = "200"; $0.meter = "7/8"; $0.beatUnit = "denominator" }.makeSettings()
        #expect(eighths.map.sections[0].tempo == .constant(100))
        let trainer = try request { $0.tempo = "80-120/10" }.makeSettings()
        #expect(trainer.map.sections.count == 2 && trainer.allowsTempoChanges)
    }

    @Test func keysParseAsTyped() {
        #expect(MetronomeKey.parse(Array(" +-=_tqx".utf8)) == [.startStop, .tempo(1), .tempo(-1), .tempo(1), .tempo(-1), .tap, .quit])
        #expect(MetronomeKey.parse([0x1B, 0x5B, 0x41, 0x1B, 0x5B, 0x44, 0x1B]) == [.tempo(10), .tempo(-1), .quit])
    }

    @Test func tapTempoAveragesRecentTaps() {
        var taps = TapTempo()
        #expect(taps.tap(at: 10) == nil)
        #expect(taps.tap(at: 10.5) == 120)
        #expect(taps.tap(at: 11.0) == 120)
        #expect(abs(taps.tap(at: 11.6)! - 60 * 3 / 1.6) < 1e-9)
        // A pause of more than two seconds starts over.
        #expect(taps.tap(at: 20) == nil)
    }

    @Test func timebaseGivesBarBeatTickOfTheMusic() throws {
        let map = try TempoMap(parsing: "1 3/4 120\n2 120-140\n1 6/8 90")
        let table = try TimebaseTable(timing: TempoMapTiming(map: map, sampleRate: 48000))
        // Bar 1 in 3/4: beats 24,000 frames apart; JACK's tempo counts the beat type.
        #expect(table.position(at: 0)! == (1, 1, 0, 120))
        let p = table.position(at: 36000)!
        #expect(p.bar == 1 && p.beat == 2 && abs(p.tick - 960) < 1e-9)
        // Bar 2 starts the ramp at 72,000.
        let ramp = table.position(at: 72000)!
        #expect(ramp.bar == 2 && ramp.beat == 1 && ramp.tick == 0)
        #expect(ramp.beatsPerMinute > 120 && ramp.beatsPerMinute < 122.5)
        let timing = TempoMapTiming(map: map, sampleRate: 48000)
        let six = table.position(at: UInt32(timing.sectionStarts[2].rounded(.up)))!
        #expect(six.bar == 4 && six.beat == 1 && six.beatsPerMinute == 180)
        #expect(table.position(at: UInt32(timing.length!.rounded(.up))) == nil)
        // An endless tail keeps counting.
        let endless = try TimebaseTable(timing: TempoMapTiming(map: try TempoMap.constant(bpm: 100).withCountIn(bars: 1), sampleRate: 48000))
        let far = endless.position(at: 28800 * 4 * 10 + 28800 * 2 + 14400)!
        #expect(far.bar == 11 && far.beat == 3 && abs(far.tick - 960) < 1e-6)
    }
}
