import Foundation
@testable import Patches
import SamplerCore
import Testing

/// What version 2 gained to hold everything version 1 says (issue 16: one format).
@Suite struct OneFormatKeysTests {
    @Test func aPatternMayEndInsideItsLastBar() throws {
        let pattern = #"{ "name": "p", "stepsPerBeat": 2, "bars": 2, "stepCount": 10, "tracks": { "kick": [1, 0, 0, 0, 0, 0, 0, 0, 0, 2] } }"#
        let kit = try decodeKit(kitJSON(pattern: pattern, song: nil))
        #expect(kit.patterns[0].stepCount == 10 && !kit.patterns[0].fillsItsBars)
        let short = pattern.replacingOccurrences(of: #""stepCount": 10"#, with: #""stepCount": 8"#)
        #expect(kitError(kitJSON(pattern: short, song: nil)) == "kit.json: patterns[0].stepCount: expected an integer between 9 and 16, got 8")
        let wrong = pattern.replacingOccurrences(of: "0, 0, 2]", with: "0, 2]")
        #expect(kitError(kitJSON(pattern: wrong, song: nil)) == "kit.json: patterns[0].tracks.kick: expected 10 steps (stepCount), got 9")
    }

    @Test func aPatternOfMoreThanAMillionStepsIsRefused() {
        let pattern = #"{ "name": "p", "beatsPerBar": 64, "stepsPerBeat": 64, "bars": 257, "tracks": {} }"#
        #expect(kitError(kitJSON(pattern: pattern, song: nil))
                == "kit.json: patterns[0]: at most 1048576 steps in a pattern, got 1052672 (64 beats × 64 steps × 257 bars)")
    }

    @Test func patternsAreOptionalAndASongStillNeedsThem() throws {
        let json = #"{ "version": 2, "tempo": 120, "instruments": [ { "id": "kick", "layers": [ { "samples": ["kick.wav"] } ] } ] }"#
        #expect(try decodeKit(json).patterns.isEmpty)
        let song = json.dropLast() + #", "song": { "sequence": [ { "pattern": "x" } ] } }"#
        #expect(kitError(String(song))?.hasPrefix(#"kit.json: song.sequence[0].pattern: unknown pattern "x""#) == true)
    }

    @Test func samplesMaySayHowTheyAreLoadedAndInstrumentsMayGiveALinearGain() throws {
        let instruments = #"[ { "id": "kick", "gain": 0.5, "layers": [ { "samples": [ { "path": "kick.wav", "stream": true } ] } ] }, { "id": "snare", "gain": 0, "layers": [ { "samples": [ { "path": "s.wav", "preload": true } ] } ] } ]"#
        let kit = try decodeKit(kitJSON(instruments: instruments, pattern: #"{ "name": "p", "tracks": {} }"#, song: nil))
        #expect(kit.instruments[0].layers[0].samples[0] == SampleFile(path: "kick.wav", resolvedPath: "/kits/kick.wav", loading: .stream))
        #expect(kit.instruments[1].layers[0].samples[0].loading == .preload)
        #expect(abs(kit.instruments[0].gainDb - 20 * log10(0.5)) < 1e-12 && kit.instruments[1].gainDb == -.infinity)
        // Written back: the gain of silence as a factor, the loading as an object.
        let again = try decodeKit(kit.patchJSON())
        #expect(again.instruments[1].gainDb == -.infinity && again.instruments[0].layers[0].samples[0].loading == .stream)
    }

    @Test func controllerKeysReadBackAsWritten() throws {
        let instruments = #"[ { "id": "hat", "layers": [ { "samples": ["h.wav"] } ], "conditions": { "controllers": { "4": [0, 63.5] }, "keySwitch": 24, "keyDown": 25, "keyUp": 26, "previousKey": 27, "channels": [2, 3], "bend": [-8192, 4000], "channelPressure": [10, 20], "polyPressure": [0, 64] }, "controllerTrigger": { "controller": 4, "range": [0, 10] }, "modulations": [ { "controller": 1, "target": "volume", "depth": -6, "curve": 4 } ], "bend": [1200, -1200], "channelControllers": false, "group": 1, "offBy": 2, "silent": true, "sustain": false }, { "id": "pad", "layers": [ { "samples": ["p.wav"] } ], "sustain": 67 } ]"#
        let kit = try decodeKit(kitJSON(instruments: instruments, pattern: #"{ "name": "p", "tracks": {} }"#, song: nil))
        let hat = kit.instruments[0]
        #expect(hat.keyDown == 25 && hat.keyUp == 26 && hat.previousKey == 27 && hat.sustainController == nil)
        #expect(hat.conditions.map(\.controller) == [4, 512, 513, 514])
        #expect(hat.conditions[1].low == -1 && abs(hat.conditions[1].high - 4000 / 8191) < 1e-7)
        #expect(kit.instruments[1].sustainController == 67)
        // A previous-key condition reads every note-on.
        #expect(kit.stateNotes == Set(0..<128))
        var plain = kit
        plain.instruments[0].previousKey = nil
        #expect(plain.stateNotes == [24, 25, 26])
        let again = try decodeKit(kit.patchJSON())
        #expect(again.instruments == kit.instruments)
    }

    @Test func aFilterAndItsControllersReadBackAsWritten() throws {
        let instruments = #"[ { "id": "pad", "layers": [ { "samples": ["p.wav"] } ], "filter": { "type": "bpf_2p", "cutoff": 1234.5, "resonance": 6, "keytrack": 50, "keycenter": 48, "veltrack": 2400, "random": 100 }, "modulations": [ { "controller": 74, "target": "cutoff", "depth": 4800 }, { "controller": 71, "target": "resonance", "depth": 12 } ] }, { "id": "plain", "layers": [ { "samples": ["q.wav"] } ] } ]"#
        let kit = try decodeKit(kitJSON(instruments: instruments, pattern: #"{ "name": "p", "tracks": {} }"#, song: nil))
        #expect(kit.instruments[0].filter == VoiceFilter(kind: .bandpass2, cutoff: 1234.5, resonance: 6, keytrack: 50, keycenter: 48,
                                                         veltrack: 2400, random: 100))
        #expect(kit.instruments[0].modulations.map(\.target) == [.cutoff, .resonance])
        #expect(kit.instruments[1].filter == nil)
        let again = try decodeKit(kit.patchJSON())
        #expect(again.instruments == kit.instruments)
    }

    /// A sample's bytes held in the patch (`"data"`, base64) read back as written; bad base64 is
    /// an error naming the key.
    @Test func embeddedSampleDataReadsBackAsWritten() throws {
        let bytes: [UInt8] = Array("RIFF1234WAVE".utf8) + [0, 255, 7]
        let instruments = #"[ { "id": "k", "layers": [ { "samples": [ { "path": "k.wav", "data": "\#(Data(bytes).base64EncodedString())", "loop": [2, 9] } ] } ] } ]"#
        let kit = try decodeKit(kitJSON(instruments: instruments, pattern: #"{ "name": "p", "tracks": {} }"#, song: nil))
        #expect(kit.instruments[0].layers[0].samples[0].data == bytes && kit.instruments[0].layers[0].samples[0].resolvedPath == "k.wav")
        #expect(try decodeKit(kit.patchJSON()).instruments == kit.instruments)
        let bad = instruments.replacingOccurrences(of: Data(bytes).base64EncodedString(), with: "not base64!")
        #expect(kitError(kitJSON(instruments: bad, pattern: #"{ "name": "p", "tracks": {} }"#, song: nil))
                == #"kit.json: instruments[0].layers[0].samples[0].data: expected the sound file's bytes in base64, got "not base64!""#)
    }

    @Test func samplePathsAreRewrittenRelativeToWhereThePatchIsWritten() throws {
        let kit = try PatchLoader.decode(Data(kitJSON().utf8), file: "kit.json", baseDirectory: "/a/kits")
        let moved = kit.withSamplePaths(relativeTo: "/a/b/c")
        #expect(moved.instruments[0].layers[0].samples[0].path == "../../kits/kick.wav")
        #expect(kit.withSamplePaths(relativeTo: "/a/kits").instruments[0].layers[0].samples[0].path == "kick.wav")
        #expect(kit.withSamplePaths(relativeTo: "/").instruments[0].layers[0].samples[0].path == "a/kits/kick.wav")
    }
}
