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
        #expect(patch.instruments.map(\.id) == ["kick", "snare", "ghost", "hat", "open-hat", "clap"])
        let pattern = try #require(patch.patterns.first)
        #expect(pattern.stepsPerBeat == 4 && pattern.beatsPerBar == 4)
        #expect(pattern.stepCount == 2 * 16 && pattern.bars == 2, "two bars of sixteenth notes")
    }

    @Test func demoPatchUsesEveryPlayerAndSound() throws {
        let patch = try PatchLoader.load(path: path)
        let pattern = try #require(patch.patterns.first)
        #expect(Set(pattern.tracks.map(\.instrument)) == Set(patch.instruments.indices))
        #expect(patch.samplePaths.count == 5, "five sounds, the snare played by two players")
    }

    @Test func everyDemoSoundResolvesToAFileInSamples() throws {
        let patch = try PatchLoader.load(path: path)
        let samples = packageRoot.appendingPathComponent("Samples").standardizedFileURL.path
        #expect(!patch.samplePaths.isEmpty)
        for sound in patch.samplePaths {
            #expect(sound.resolvedPath.hasPrefix("/"), "\(sound.path) resolves to an absolute path")
            #expect(URL(fileURLWithPath: sound.resolvedPath).deletingLastPathComponent().path == samples)
            #expect(FileManager.default.fileExists(atPath: sound.resolvedPath), "\(sound.resolvedPath) exists")
        }
    }
}
