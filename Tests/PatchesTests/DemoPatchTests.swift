import Foundation
import Patches
import Testing

/// The version 1 demo, kept to show that version 1 patches still load.
@Suite struct DemoPatchTests {
    let path = packageRoot.appendingPathComponent("Patches/drums-v1.json").path

    @Test func demoPatchDecodes() throws {
        let patch = try PatchLoader.load(path: path)
        #expect(patch.version == 1)
        #expect(patch.tempo == 120)
        #expect(patch.file == path)
        #expect(patch.players.map(\.id) == ["kick", "snare", "ghost", "hat", "open-hat", "clap"])
        let pattern = try #require(patch.pattern)
        #expect(pattern.stepsPerBeat == 4 && pattern.beatsPerBar == 4)
        #expect(pattern.steps.count == 2 * 16, "two bars of sixteenth notes")
    }

    @Test func demoPatchUsesEveryPlayerAndSound() throws {
        let patch = try PatchLoader.load(path: path)
        let pattern = try #require(patch.pattern)
        #expect(Set(pattern.steps.joined()) == Set(patch.players.indices))
        #expect(Set(patch.players.map(\.sound)) == Set(patch.sounds.map(\.id)))
    }

    @Test func everyDemoSoundResolvesToAFileInSamples() throws {
        let patch = try PatchLoader.load(path: path)
        let samples = packageRoot.appendingPathComponent("Samples").standardizedFileURL.path
        #expect(!patch.sounds.isEmpty)
        for sound in patch.sounds {
            #expect(sound.resolvedPath.hasPrefix("/"), "\(sound.id) resolves to an absolute path")
            #expect(URL(fileURLWithPath: sound.resolvedPath).deletingLastPathComponent().path == samples)
            #expect(FileManager.default.fileExists(atPath: sound.resolvedPath), "\(sound.resolvedPath) exists")
        }
    }
}
