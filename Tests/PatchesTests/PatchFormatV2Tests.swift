import Foundation
@testable import Patches
import Testing

/// A small valid version 2 patch; each argument replaces one part (JSON text).
func kitJSON(
    instruments: String = #"""
    [ { "id": "kick", "layers": [ { "samples": ["kick.wav"] } ] },
      { "id": "snare", "layers": [ { "velocity": [1, 63], "samples": ["soft.wav"] },
                                   { "velocity": [64, 127], "samples": ["hard1.wav", "hard2.wav"], "selection": "random", "seed": 9 } ],
        "gainDb": -3, "pan": -0.5, "tune": 2, "midiNote": 40, "chokeGroup": 0, "voices": 3 } ]
    """#,
    pattern: String = #"""
    { "name": "beat", "beatsPerBar": 2, "stepsPerBeat": 2, "bars": 1, "swing": 25, "seed": 3,
      "humanize": { "seed": 5, "frames": 10, "velocity": 4 },
      "tracks": { "kick": [100, 0, 0, 0], "snare": { "steps": [0, 0, 90, 30], "probability": [1, 1, 0.5, 1] } } }
    """#,
    song: String? = #"{ "sequence": [ { "pattern": "beat", "repeats": 2 }, { "pattern": "beat", "tempo": 90 } ], "loop": true }"#,
    extra: String = ""
) -> String {
    var members = [#""version": 2"#, #""tempo": 120"#, #""instruments": \#(instruments)"#, #""patterns": [\#(pattern)]"#]
    if let song { members.append(#""song": \#(song)"#) }
    if !extra.isEmpty { members.append(extra) }
    return "{\n  " + members.joined(separator: ",\n  ") + "\n}\n"
}

func decodeKit(_ json: String) throws(PatchError) -> Patch {
    let kit = try PatchLoader.decode(Data(json.utf8), file: "kit.json", baseDirectory: "/kits")
    guard kit.version == 2 else { throw PatchError(file: "kit.json", message: "decoded as version \(kit.version)") }
    return kit
}

func kitError(_ json: String) -> String? {
    do {
        _ = try decodeKit(json)
        return nil
    } catch {
        return error.description
    }
}

@Suite struct PatchFormatV2Tests {
    @Test func decodesEveryField() throws {
        let kit = try decodeKit(kitJSON())
        #expect(kit.tempo == 120)
        #expect(kit.instruments.map(\.id) == ["kick", "snare"])
        let snare = kit.instruments[1]
        #expect(snare.gainDb == -3 && snare.pan == -0.5 && snare.tune == 2 && snare.midiNote == 40 && snare.voices == 3)
        #expect(snare.layers[0].velocities == 1...63 && snare.layers[0].selection == .roundRobin)
        #expect(snare.layers[1].velocities == 64...127 && snare.layers[1].selection == .random(seed: 9))
        #expect(snare.layers[1].samples.map(\.resolvedPath) == ["/kits/hard1.wav", "/kits/hard2.wav"])
        let pattern = kit.patterns[0]
        #expect(pattern.stepCount == 4 && pattern.swing == 25 && pattern.seed == 3)
        #expect(pattern.humanize == Humanize(seed: 5, frames: 10, velocity: 4))
        #expect(pattern.tracks == [DrumTrack(instrument: 0, velocities: [100, 0, 0, 0]),
                                   DrumTrack(instrument: 1, velocities: [0, 0, 90, 30], probabilities: [1, 1, 0.5, 1])])
        #expect(kit.song == Song(entries: [.init(pattern: 0, repeats: 2), .init(pattern: 0, repeats: 1, tempo: 90)], loop: true))
    }

    @Test func defaultsAreOneVoiceNoSwingNoHumanizeAndAGeneralMIDINote() throws {
        let kit = try decodeKit(kitJSON(pattern: #"{ "name": "p", "tracks": {} }"#, song: nil))
        let kick = kit.instruments[0]
        #expect(kick.voices == 1 && kick.gainDb == 0 && kick.tune == 0 && kick.chokeGroup == 0 && kick.midiNote == nil)
        #expect(kit.patterns[0].stepCount == 16 && kit.patterns[0].swing == 0 && kit.patterns[0].humanize == nil)
        #expect(kit.song == nil)
        #expect(kit.resolvedMIDINotes == [36, 40])
    }

    @Test func aProbabilityForTheWholeTrackAppliesToEveryStep() throws {
        let kit = try decodeKit(kitJSON(pattern: #"{ "name": "p", "stepsPerBeat": 1, "tracks": { "kick": { "steps": [1, 2, 3, 4], "probability": 0.25 } } }"#, song: nil))
        #expect(kit.patterns[0].tracks[0].probabilities == [0.25, 0.25, 0.25, 0.25])
    }

    @Test func versionOnePatchesStillLoad() throws {
        let patch = try decode(patchJSON())
        #expect(patch.version == 1 && patch.instruments.count == 2)
        #expect(try PatchLoader.decode(Data(patchJSON().utf8), file: "drums.json", baseDirectory: "/patches") == patch)
    }

    @Test func bothVersionsReadIntoTheOneModel() throws {
        #expect(try decode(kitJSON()).version == 2)
        #expect(try decode(patchJSON()).version == 1)
    }

    @Test(arguments: [
        (kitJSON(extra: #""swing": 1"#), "kit.json: swing: unknown key (expected one of: version, tempo, instruments, patterns, song, panLaw)"),
        (kitJSON(extra: #""sounds": {}"#), "kit.json: sounds: unknown key (expected one of: version, tempo, instruments, patterns, song, panLaw)"),
        (kitJSON(instruments: #"[ { "id": "k", "layers": [ { "samples": ["k.wav"] } ], "level": 1 } ]"#, song: nil),
         "kit.json: instruments[0].level: unknown key (expected one of: id, layers, gain, gainDb, pan, tune, loops, midiNote, chokeGroup, voices, shareNote, roundRobinAcrossLayers, envelope, trigger, output)"),
        (kitJSON(instruments: #"[ { "id": "k", "layers": [ { "sample": "k.wav" } ] } ]"#, song: nil),
         "kit.json: instruments[0].layers[0].sample: unknown key (expected one of: velocity, samples, selection, seed, gainDb, velocityCurve, velocityTrack)"),
        (kitJSON(instruments: "[]"), "kit.json: instruments: expected at least one instrument, got an empty array"),
        (kitJSON(instruments: #"[ { "id": "k", "layers": [] } ]"#), "kit.json: instruments[0].layers: expected at least one layer, got an empty array"),
        (kitJSON(instruments: #"[ { "id": "k", "layers": [ { "samples": [] } ] } ]"#),
         "kit.json: instruments[0].layers[0].samples: expected at least one sample path, got an empty array"),
        (kitJSON(instruments: #"[ { "id": "kick", "layers": [ { "samples": ["k.wav"] } ] }, { "id": "kick", "layers": [ { "samples": ["k.wav"] } ] } ]"#),
         #"kit.json: instruments[1].id: duplicate instrument id "kick" (first used by instruments[0])"#),
        (kitJSON(instruments: #"[ { "id": "k", "layers": [ { "velocity": [64, 10], "samples": ["k.wav"] } ] } ]"#),
         "kit.json: instruments[0].layers[0].velocity: expected [min, max] with 1 ≤ min ≤ max ≤ 127, got [64, 10]"),
        (kitJSON(instruments: #"[ { "id": "k", "layers": [ { "velocity": [64], "samples": ["k.wav"] } ] } ]"#),
         "kit.json: instruments[0].layers[0].velocity: expected [min, max] with 1 ≤ min ≤ max ≤ 127, got an array"),
        (kitJSON(instruments: #"[ { "id": "k", "layers": [ { "velocity": [0, 10], "samples": ["k.wav"] } ] } ]"#),
         "kit.json: instruments[0].layers[0].velocity[0]: expected an integer between 1 and 127, got 0"),
        (kitJSON(instruments: #"[ { "id": "k", "layers": [ { "samples": ["k.wav"], "selection": "shuffle" } ] } ]"#),
         #"kit.json: instruments[0].layers[0].selection: expected "roundRobin" or "random", got "shuffle""#),
        (kitJSON(instruments: #"[ { "id": "k", "layers": [ { "samples": ["k.wav"], "seed": 3 } ] } ]"#),
         #"kit.json: instruments[0].layers[0].seed: a seed needs "selection": "random""#),
        (kitJSON(instruments: #"[ { "id": "k", "layers": [ { "samples": ["k.wav"] } ], "tune": 60 } ]"#),
         "kit.json: instruments[0].tune: expected a number between -48 and 48, got 60"),
        (kitJSON(instruments: #"[ { "id": "k", "layers": [ { "samples": ["k.wav"] } ], "voices": 0 } ]"#),
         "kit.json: instruments[0].voices: expected an integer between 1 and 64, got 0"),
        (kitJSON(instruments: #"[ { "id": "kick", "layers": [ { "samples": ["k.wav"] } ], "midiNote": 36 }, { "id": "snare", "layers": [ { "samples": ["k.wav"] } ], "midiNote": 36 } ]"#),
         "kit.json: instruments[1].midiNote: MIDI note 36 is already used by instruments[0].midiNote (instruments that sound together on one note both say \"shareNote\": true)"),
        (kitJSON(pattern: #"{ "name": "p", "tracks": { "kick": [1, 2, 3] } }"#, song: nil),
         "kit.json: patterns[0].tracks.kick: expected 16 steps (4 beats × 4 steps × 1 bars), got 3"),
        (kitJSON(pattern: #"{ "name": "p", "stepsPerBeat": 1, "tracks": { "kick": [1, 2, 3, 128] } }"#, song: nil),
         "kit.json: patterns[0].tracks.kick[3]: expected an integer between 0 and 127, got 128"),
        (kitJSON(pattern: #"{ "name": "p", "stepsPerBeat": 1, "tracks": { "tom": [1, 2, 3, 4] } }"#, song: nil),
         #"kit.json: patterns[0].tracks.tom: unknown instrument "tom" (expected one of: kick, snare)"#),
        (kitJSON(pattern: #"{ "name": "p", "stepsPerBeat": 1, "tracks": { "kick": { "steps": [1, 2, 3, 4], "probability": 1.5 } } }"#, song: nil),
         "kit.json: patterns[0].tracks.kick.probability: expected a number between 0 and 1, got 1.5"),
        (kitJSON(pattern: #"{ "name": "p", "stepsPerBeat": 1, "tracks": { "kick": { "steps": [1, 2, 3, 4], "probability": [1] } } }"#, song: nil),
         "kit.json: patterns[0].tracks.kick.probability: expected 4 probabilities (one per step), got 1"),
        (kitJSON(pattern: #"{ "name": "p", "stepsPerBeat": 1, "tracks": { "kick": { "velocities": [1, 2, 3, 4] } } }"#, song: nil),
         "kit.json: patterns[0].tracks.kick.velocities: unknown key (expected one of: steps, probability)"),
        (kitJSON(pattern: #"{ "name": "p", "swing": 95, "tracks": {} }"#, song: nil),
         "kit.json: patterns[0].swing: expected a number between 0 and 90, got 95"),
        (kitJSON(pattern: #"{ "name": "p", "humanize": { "frames": 10 }, "tracks": {} }"#, song: nil),
         #"kit.json: patterns[0].humanize: missing required key "seed""#),
        (kitJSON(pattern: #"{ "name": "p", "shuffle": 1, "tracks": {} }"#, song: nil),
         "kit.json: patterns[0].shuffle: unknown key (expected one of: name, beatsPerBar, stepsPerBeat, bars, stepCount, tracks, swing, seed, humanize)"),
        (kitJSON(pattern: #"{ "name": "p", "tracks": {} }"#, song: #"{ "sequence": [ { "pattern": "chorus" } ] }"#),
         #"kit.json: song.sequence[0].pattern: unknown pattern "chorus" (expected one of: p)"#),
        (kitJSON(pattern: #"{ "name": "p", "tracks": {} }"#, song: #"{ "sequence": [ { "pattern": "p", "repeats": 0 } ] }"#),
         "kit.json: song.sequence[0].repeats: expected an integer between 1 and 10000, got 0"),
        (kitJSON(pattern: #"{ "name": "p", "tracks": {} }"#, song: #"{ "sequence": [ { "pattern": "p" } ], "loop": "yes" }"#),
         #"kit.json: song.loop: expected true or false, got "yes""#),
        (kitJSON(pattern: #"{ "name": "p", "tracks": {} }"#, song: #"{ "sequence": [] }"#),
         "kit.json: song.sequence: expected at least one song entry, got an empty array"),
        (kitJSON(pattern: #"{ "name": "p", "tracks": {} }"#, song: #"{ "sequence": [ { "pattern": "p", "tempo": 0 } ] }"#),
         "kit.json: song.sequence[0].tempo: expected a number between 1 and 1000, got 0"),
    ])
    func everyInvalidValueIsNamedByItsPath(json: String, expected: String) {
        #expect(kitError(json) == expected)
    }

    @Test func duplicatePatternNamesAreRejected() {
        let json = kitJSON(pattern: #"{ "name": "p", "tracks": {} }, { "name": "p", "tracks": {} }"#, song: nil)
        #expect(kitError(json) == #"kit.json: patterns[1].name: duplicate pattern name "p" (first used by patterns[0])"#)
    }
}

@Suite struct DemoKitTests {
    @Test(arguments: ["drums.json", "shuffle.json"])
    func demoKitsDecodeAndUseOnlyTheProjectsSamples(name: String) throws {
        let path = packageRoot.appendingPathComponent("Patches/\(name)").path
        let kit = try PatchLoader.load(path: path)
        #expect(kit.version == 2)
        #expect(kit.song != nil && kit.patterns.count >= 2)
        let samples = packageRoot.appendingPathComponent("Samples").standardizedFileURL.path
        for file in kit.samplePaths {
            #expect(URL(fileURLWithPath: file.resolvedPath).deletingLastPathComponent().path == samples)
            #expect(FileManager.default.fileExists(atPath: file.resolvedPath), "\(file.resolvedPath) exists")
        }
        // The two hi-hats choke each other.
        let hats = kit.instruments.filter { $0.id.contains("hat") }
        #expect(hats.count == 2 && hats[0].chokeGroup != 0 && hats[0].chokeGroup == hats[1].chokeGroup)
    }

    @Test func theShuffleSwings() throws {
        let path = packageRoot.appendingPathComponent("Patches/shuffle.json").path
        let kit = try PatchLoader.load(path: path)
        #expect(kit.patterns.allSatisfy { $0.swing > 0 })
    }
}

@Suite struct DrumKitJSONTests {
    @Test func aWrittenKitReadsBackTheSame() throws {
        let kit = try decodeKit(kitJSON())
        var absolute = kit
        // Written paths are taken as they are: make them absolute so the base directory does not matter.
        for i in absolute.instruments.indices {
            for l in absolute.instruments[i].layers.indices {
                absolute.instruments[i].layers[l].samples = absolute.instruments[i].layers[l].samples.map {
                    SampleFile(path: $0.resolvedPath, resolvedPath: $0.resolvedPath)
                }
            }
        }
        let text = absolute.patchJSON()
        let again = try decodeKit(text)
        #expect(again == absolute, "\(text)")
    }

    /// Layer gains and the kit's pan law decode, are written back and read the same; a bad law
    /// names its path and the choices.
    @Test func layerGainsAndThePanLaw() throws {
        var json = kitJSON().replacingOccurrences(of: #""samples": ["soft.wav"] }"#, with: #""samples": ["soft.wav"], "gainDb": -4.5 }"#)
        json = json.replacingOccurrences(of: #""version": 2,"#, with: #""version": 2, "panLaw": "balance","#)
        let kit = try decodeKit(json)
        #expect(kit.panLaw == .balance)
        #expect(kit.instruments[1].layers[0].gainDb == -4.5)
        #expect(kit.instruments[1].layers[1].gainDb == 0)
        var absolute = kit
        for i in absolute.instruments.indices {
            for l in absolute.instruments[i].layers.indices {
                absolute.instruments[i].layers[l].samples = absolute.instruments[i].layers[l].samples.map {
                    SampleFile(path: $0.resolvedPath, resolvedPath: $0.resolvedPath)
                }
            }
        }
        #expect(try decodeKit(absolute.patchJSON()) == absolute)
        let bad = kitJSON().replacingOccurrences(of: #""version": 2,"#, with: #""version": 2, "panLaw": "linear","#)
        #expect(kitError(bad) == #"kit.json: panLaw: expected "constant-power", "balance" or "constant-power-stereo", got "linear""#)
        let loud = kitJSON().replacingOccurrences(of: #""samples": ["soft.wav"] }"#, with: #""samples": ["soft.wav"], "gainDb": 30 }"#)
        #expect(kitError(loud)?.contains("instruments[1].layers[0].gainDb") == true)
    }
}

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

    @Test func samplePathsAreRewrittenRelativeToWhereThePatchIsWritten() throws {
        let kit = try PatchLoader.decode(Data(kitJSON().utf8), file: "kit.json", baseDirectory: "/a/kits")
        let moved = kit.withSamplePaths(relativeTo: "/a/b/c")
        #expect(moved.instruments[0].layers[0].samples[0].path == "../../kits/kick.wav")
        #expect(kit.withSamplePaths(relativeTo: "/a/kits").instruments[0].layers[0].samples[0].path == "kick.wav")
        #expect(kit.withSamplePaths(relativeTo: "/").instruments[0].layers[0].samples[0].path == "a/kits/kick.wav")
    }
}
