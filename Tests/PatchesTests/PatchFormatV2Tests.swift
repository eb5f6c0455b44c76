import Foundation
@testable import Patches
import Testing

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
        (kitJSON(extra: #""swing": 1"#), "kit.json: swing: unknown key (expected one of: version, tempo, instruments, patterns, song, panLaw, controllers, keySwitch, headFrames)"),
        (kitJSON(extra: #""sounds": {}"#), "kit.json: sounds: unknown key (expected one of: version, tempo, instruments, patterns, song, panLaw, controllers, keySwitch, headFrames)"),
        (kitJSON(instruments: #"[ { "id": "k", "layers": [ { "samples": ["k.wav"] } ], "level": 1 } ]"#, song: nil),
         "kit.json: instruments[0].level: unknown key (expected one of: id, layers, gain, gainDb, pan, tune, loops, midiNote, chokeGroup, voices, shareNote, roundRobinAcrossLayers, envelope, trigger, output, conditions, controllerTrigger, modulations, bend, channelControllers, group, offBy, silent, sustain, random, filter, delay, heldDecay, loopUntilRelease)"),
        (kitJSON(instruments: #"[ { "id": "k", "layers": [ { "sample": "k.wav" } ] } ]"#, song: nil),
         "kit.json: instruments[0].layers[0].sample: unknown key (expected one of: velocity, samples, selection, seed, gainDb, velocityCurve, velocityTrack)"),
        (kitJSON(instruments: #"[ { "id": "k", "layers": [ { "samples": ["k.wav"] } ], "loops": -1, "loopUntilRelease": true } ]"#, song: nil),
         #"kit.json: instruments[0].loopUntilRelease: loopUntilRelease needs an "envelope" that follows note-offs (its release ends the loop)"#),
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
        (kitJSON(instruments: #"[ { "id": "k", "layers": [ { "samples": ["k.wav"] } ], "conditions": { "controllers": { "600": [0, 127] } } } ]"#),
         #"kit.json: instruments[0].conditions.controllers["600"]: a controller number is 0 to 511, got "600""#),
        (kitJSON(instruments: #"[ { "id": "k", "layers": [ { "samples": ["k.wav"] } ], "conditions": { "bend": [100, -100] } } ]"#),
         "kit.json: instruments[0].conditions.bend: the range's low end (100) is above its high end (-100)"),
        (kitJSON(instruments: #"[ { "id": "k", "layers": [ { "samples": ["k.wav"] } ], "conditions": { "keyDown": 200 } } ]"#),
         "kit.json: instruments[0].conditions.keyDown: expected an integer between 0 and 127, got 200"),
        (kitJSON(instruments: #"[ { "id": "k", "layers": [ { "samples": ["k.wav"] } ], "conditions": { "channelPressure": [0] } } ]"#),
         "kit.json: instruments[0].conditions.channelPressure: expected [low, high] with 0 ≤ low ≤ high ≤ 127, got an array"),
        (kitJSON(instruments: #"[ { "id": "k", "layers": [ { "samples": ["k.wav"] } ], "conditions": { "held": 1 } } ]"#),
         "kit.json: instruments[0].conditions.held: unknown key (expected one of: controllers, keySwitch, channels, keyDown, keyUp, previousKey, legato, bend, channelPressure, polyPressure)"),
        (kitJSON(instruments: #"[ { "id": "k", "layers": [ { "samples": ["k.wav"] } ], "sustain": true } ]"#),
         "kit.json: instruments[0].sustain: expected a controller number (0 to 127), or false for none, got true"),
        (kitJSON(instruments: #"[ { "id": "k", "layers": [ { "samples": ["k.wav"] } ], "modulations": [ { "controller": 1, "target": "filter", "depth": 1 } ] } ]"#),
         #"kit.json: instruments[0].modulations[0].target: expected "amplitude", "volume", "pan", "pitch", "cutoff" or "resonance", got "filter""#),
        (kitJSON(instruments: #"[ { "id": "k", "layers": [ { "samples": ["k.wav"] } ], "filter": { "type": "lowpass", "cutoff": 100 } } ]"#),
         #"kit.json: instruments[0].filter.type: expected "lpf_1p", "lpf_2p", "hpf_1p", "hpf_2p", "bpf_2p", "brf_2p", got "lowpass""#),
        (kitJSON(instruments: #"[ { "id": "k", "layers": [ { "samples": ["k.wav"] } ], "filter": { "type": "lpf_2p", "cutoff": 30000 } } ]"#),
         "kit.json: instruments[0].filter.cutoff: expected a number between 0 and 20000, got 30000"),
        (kitJSON(instruments: #"[ { "id": "k", "layers": [ { "samples": ["k.wav"] } ], "filter": { "type": "lpf_2p" } } ]"#),
         "kit.json: instruments[0].filter: missing required key \"cutoff\""),
        (kitJSON(instruments: #"[ { "id": "k", "layers": [ { "samples": ["k.wav"] } ], "bend": [200] } ]"#),
         "kit.json: instruments[0].bend: expected [cents up, cents down], each -9600 to 9600, got an array"),
    ])
    func everyInvalidValueIsNamedByItsPath(json: String, expected: String) {
        #expect(kitError(json) == expected)
    }

    @Test func duplicatePatternNamesAreRejected() {
        let json = kitJSON(pattern: #"{ "name": "p", "tracks": {} }, { "name": "p", "tracks": {} }"#, song: nil)
        #expect(kitError(json) == #"kit.json: patterns[1].name: duplicate pattern name "p" (first used by patterns[0])"#)
    }
}
