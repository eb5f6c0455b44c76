import Foundation
import Patches
import Testing

/// Version 1 patches read into the one model: each player an instrument of one sample.
@Suite struct PatchDecodingTests {
    /// The only sample of instrument `i`.
    private func sample(_ patch: Patch, _ i: Int) -> SampleFile { patch.instruments[i].layers[0].samples[0] }

    @Test func playersBecomeInstrumentsOfOneSampleAtUnityGainCentrePanAndNoLoops() throws {
        let patch = try decode(patchJSON())
        #expect(patch.version == 1)
        #expect(patch.instruments[0] == DrumInstrument(
            id: "kick", layers: [DrumLayer(samples: [SampleFile(path: "kick.wav", resolvedPath: "/patches/kick.wav")])]))
    }

    @Test func playerFieldsAreReadAsWritten() throws {
        let patch = try decode(patchJSON(players: #"""
            [ { "id": "kick", "sound": "kick", "gain": 0.5, "pan": -0.75, "loops": -1 } ]
            """#, pattern: nil))
        let kick = patch.instruments[0]
        #expect(abs(kick.gainDb - 20 * log10(0.5)) < 1e-12 && kick.pan == -0.75 && kick.loops == -1 && kick.voices == 1)
    }

    @Test func gainInDecibelsIsKeptAndZeroGainIsSilence() throws {
        let patch = try decode(patchJSON(players: #"[ { "id": "kick", "sound": "kick", "gainDb": -20 }, { "id": "snare", "sound": "snare", "gain": 0 } ]"#, pattern: nil))
        #expect(abs(patch.instruments[0].gainDb + 20) < 1e-12)
        #expect(patch.instruments[1].gainDb == -.infinity)
    }

    @Test func integersMayBeWrittenWithAZeroFraction() throws {
        let patch = try decode(patchJSON(players: #"[ { "id": "kick", "sound": "kick", "loops": 2.0 } ]"#, pattern: nil))
        #expect(patch.instruments[0].loops == 2)
    }

    @Test func twoPlayersMayShareASound() throws {
        let patch = try decode(patchJSON(players: #"[ { "id": "a", "sound": "kick" }, { "id": "b", "sound": "kick", "gainDb": -6 } ]"#, pattern: nil))
        #expect(sample(patch, 0) == sample(patch, 1))
        #expect(patch.samplePaths.count == 1)
    }

    @Test func relativeSoundPathsResolveAgainstThePatchDirectory() throws {
        let patch = try decode(patchJSON(sounds: #"{ "kick": "../Samples/kick.wav", "snare": "drums/snare.wav" }"#))
        #expect(sample(patch, 0) == SampleFile(path: "../Samples/kick.wav", resolvedPath: "/Samples/kick.wav"))
        #expect(sample(patch, 1) == SampleFile(path: "drums/snare.wav", resolvedPath: "/patches/drums/snare.wav"))
    }

    @Test func absoluteSoundPathsStayAsWritten() throws {
        let patch = try decode(patchJSON(sounds: #"{ "kick": "/opt/kits/kick.wav", "snare": "s.wav" }"#))
        #expect(sample(patch, 0).resolvedPath == "/opt/kits/kick.wav")
    }

    @Test func thePatternBecomesAPatternNamedPatternAtFullVelocity() throws {
        let pattern = try #require(try decode(patchJSON()).patterns.first)
        #expect(pattern == DrumPattern(name: "pattern", beatsPerBar: 4, stepsPerBeat: 4, bars: 1, tracks: [
            DrumTrack(instrument: 0, velocities: [127, 0, 0, 0]), DrumTrack(instrument: 1, velocities: [0, 0, 127, 0]),
        ], stepCount: 4))
    }

    @Test func patternStepsNameThePlayersThatPlay() throws {
        let patch = try decode(patchJSON(pattern: #"""
            { "stepsPerBeat": 2, "beatsPerBar": 3, "steps": [["snare", "kick"], []] }
            """#))
        let pattern = patch.patterns[0]
        #expect(pattern.stepsPerBeat == 2 && pattern.beatsPerBar == 3 && pattern.stepCount == 2 && pattern.bars == 1)
        #expect(pattern.tracks == [DrumTrack(instrument: 0, velocities: [127, 0]), DrumTrack(instrument: 1, velocities: [127, 0])])
    }

    @Test func patternNeedNotFillWholeBars() throws {
        let patch = try decode(patchJSON(pattern: #"{ "steps": [["kick"], [], ["snare"]] }"#))
        #expect(patch.patterns[0].stepCount == 3 && !patch.patterns[0].fillsItsBars)
        let long = try decode(patchJSON(pattern: "{ \"steps\": [" + Array(repeating: "[\"kick\"]", count: 20).joined(separator: ",") + "] }"))
        #expect(long.patterns[0].stepCount == 20 && long.patterns[0].bars == 2)
    }

    @Test func patternIsOptional() throws {
        #expect(try decode(patchJSON(pattern: nil)).patterns.isEmpty)
    }

    @Test func loadResolvesSoundsAgainstTheFilesDirectory() throws {
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("PatchesTests-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("kit.json")
        try Data(patchJSON().utf8).write(to: file)

        let patch = try PatchLoader.load(path: file.path)
        #expect(patch.file == file.path)
        #expect(sample(patch, 1).resolvedPath == directory.appendingPathComponent("drums/snare.wav").path)
    }
}
