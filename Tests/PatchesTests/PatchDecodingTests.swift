import Foundation
import Patches
import Testing

@Suite struct PatchDecodingTests {
    @Test func playersDefaultToUnityGainCentrePanAndNoLoops() throws {
        let patch = try decode(patchJSON())
        #expect(patch.players[0] == PlayerEntry(id: "kick", sound: "kick", gain: 1, pan: 0, loops: 0))
    }

    @Test func playerFieldsAreReadAsWritten() throws {
        let patch = try decode(patchJSON(players: #"""
            [ { "id": "kick", "sound": "kick", "gain": 0.5, "pan": -0.75, "loops": -1 } ]
            """#, pattern: nil))
        #expect(patch.players == [PlayerEntry(id: "kick", sound: "kick", gain: 0.5, pan: -0.75, loops: -1)])
    }

    @Test func gainInDecibelsBecomesLinear() throws {
        let patch = try decode(patchJSON(players: #"[ { "id": "kick", "sound": "kick", "gainDb": -20 } ]"#, pattern: nil))
        #expect(abs(patch.players[0].gain - 0.1) < 1e-12)
    }

    @Test func integersMayBeWrittenWithAZeroFraction() throws {
        let patch = try decode(patchJSON(players: #"[ { "id": "kick", "sound": "kick", "loops": 2.0 } ]"#, pattern: nil))
        #expect(patch.players[0].loops == 2)
    }

    @Test func soundsAreSortedByID() throws {
        let patch = try decode(patchJSON(sounds: #"{ "snare": "s.wav", "kick": "k.wav", "clap": "c.wav" }"#))
        #expect(patch.sounds.map(\.id) == ["clap", "kick", "snare"])
    }

    @Test func relativeSoundPathsResolveAgainstThePatchDirectory() throws {
        let patch = try decode(patchJSON(sounds: #"{ "kick": "../Samples/kick.wav", "snare": "drums/snare.wav" }"#))
        #expect(patch.sounds == [
            SoundEntry(id: "kick", path: "../Samples/kick.wav", resolvedPath: "/Samples/kick.wav"),
            SoundEntry(id: "snare", path: "drums/snare.wav", resolvedPath: "/patches/drums/snare.wav"),
        ])
    }

    @Test func absoluteSoundPathsStayAsWritten() throws {
        let patch = try decode(patchJSON(sounds: #"{ "kick": "/opt/kits/kick.wav", "snare": "s.wav" }"#))
        #expect(patch.sound(id: "kick")?.resolvedPath == "/opt/kits/kick.wav")
    }

    @Test func patternDefaultsToSixteenthsInFourFour() throws {
        let pattern = try #require(try decode(patchJSON()).pattern)
        #expect(pattern == Pattern(stepsPerBeat: 4, beatsPerBar: 4, steps: [[0], [], [1], []]))
    }

    @Test func patternStepsAreIndicesIntoPlayers() throws {
        let patch = try decode(patchJSON(pattern: #"""
            { "stepsPerBeat": 2, "beatsPerBar": 3, "steps": [["snare", "kick"], []] }
            """#))
        #expect(patch.pattern == Pattern(stepsPerBeat: 2, beatsPerBar: 3, steps: [[1, 0], []]))
    }

    @Test func patternNeedNotFillWholeBars() throws {
        let patch = try decode(patchJSON(pattern: #"{ "steps": [["kick"], [], ["snare"]] }"#))
        #expect(patch.pattern?.steps.count == 3)
    }

    @Test func patternIsOptional() throws {
        #expect(try decode(patchJSON(pattern: nil)).pattern == nil)
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
        #expect(patch.sound(id: "snare")?.resolvedPath == directory.appendingPathComponent("drums/snare.wav").path)
    }
}
