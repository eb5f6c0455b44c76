import Foundation
import JACKTestSupport
import Patches
import SamplerCore
import DrumPlayer
import ProgramHost
import SoundFiles
import Testing

/// Streamed patch players rendered offline (no server): the same frames as preloaded ones.
@Suite struct PatchStreamingTests {
    /// A patch whose two players play the same 1.5 s ramp, hard left streamed and hard right
    /// preloaded, each looping once, retriggered every 2 s bar.
    private func writePatch(in directory: URL, streamedKey: String = #""stream": true"#) throws -> String {
        let ramp = (0..<72_000).map { Float($0 + 1) / 1_000_000 }
        try WAVFileWriter.write(path: directory.appendingPathComponent("ramp.wav").path, channels: [ramp], sampleRate: 48000)
        let steps = "[" + (["[\"streamed\", \"memory\"]"] + Array(repeating: "[]", count: 15)).joined(separator: ", ") + "]"
        let json = """
            { "version": 1, "tempo": 120, "sounds": { "ramp": "ramp.wav" },
              "players": [ { "id": "streamed", "sound": "ramp", "pan": -1, "loops": 1, \(streamedKey) },
                           { "id": "memory", "sound": "ramp", "pan": 1, "loops": 1, "preload": true } ],
              "pattern": { "stepsPerBeat": 4, "steps": \(steps) } }
            """
        let path = directory.appendingPathComponent("stream.json").path
        try json.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    @Test func aStreamedPlayerRendersTheSameFramesAsAPreloadedOne() throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let patch = try PatchLoader.load(path: writePatch(in: directory))
        var program = try PatchProgram(kit: patch)
        let engine = Engine(configuration: .init(maxPlayers: 2))
        try program.prepare(engine: engine, sampleRate: 48000)
        var feeder: CommandFeeder? = program.makeFeeder(origin: 0)
        let out = OfflineRenderer(engine: engine, sampleRate: 48000).renderToMemory(frameCount: 7 * 48000, feeder: &feeder)
        // Bars at 0, 2, 4, 6 s; each plays 1.5 s, wraps and is cut by the next bar's retrigger.
        // The retrigger at 2 s starts the ramp again while the old sound fades out (a 96-frame
        // declick), then only the new one sounds.
        #expect(out.right[0] == 1e-6 && out.right[72_000] == 1e-6 && out.right[96_000] > 1e-6 && out.right[96_096] == 97e-6)
        #expect(firstDifference(out.left, out.right) == nil)
    }

    @Test func aLongSoundStreamsAutomaticallyUnlessThePatchSaysPreload() throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let patch = try PatchLoader.load(path: writePatch(in: directory, streamedKey: #""gain": 1"#))
        var options = PatchStreamingOptions()
        options.threshold = 1  // the ramp lasts 1.5 s
        let automatic = try LoadedPatch(patch, engine: Engine(), sampleRate: 48000, streaming: options)
        #expect(automatic.streams(instrument: 0) && !automatic.streams(instrument: 1))
        let standard = try LoadedPatch(patch, engine: Engine(), sampleRate: 48000)
        #expect(!standard.streams(instrument: 0) && !standard.streams(instrument: 1))
    }

    /// Which ring a streamed retrigger takes is a function of the triggers' frames (issue 34):
    /// retriggers 31 ms apart continue the ring, ones more than a quarter second apart restart it,
    /// whatever the renderer's block size (and so its look-ahead). Before, a render in large
    /// blocks continued where one in small blocks restarted.
    @Test func streamedRetriggersDoNotDependOnTheBlockSize() throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let ramp = (0..<72_000).map { Float($0 + 1) / 1_000_000 }
        try WAVFileWriter.write(path: directory.appendingPathComponent("ramp.wav").path, channels: [ramp], sampleRate: 48000)
        // 16 steps a beat at 120 bpm: 1,500 frames a step.
        let hits: Set<Int> = [0, 1, 2, 20, 21, 40, 55]
        let steps = "[" + (0..<64).map { hits.contains($0) ? "[\"streamed\"]" : "[]" }.joined(separator: ", ") + "]"
        let json = """
            { "version": 1, "tempo": 120, "sounds": { "ramp": "ramp.wav" },
              "players": [ { "id": "streamed", "sound": "ramp", "stream": true } ],
              "pattern": { "stepsPerBeat": 16, "steps": \(steps) } }
            """
        let path = directory.appendingPathComponent("retrigger.json").path
        try json.write(toFile: path, atomically: true, encoding: .utf8)
        func render(blockSize: Int) throws -> [Float] {
            let patch = try PatchLoader.load(path: path)
            var program = try PatchProgram(kit: patch)
            let engine = Engine(configuration: .init(maxPlayers: 2))
            try program.prepare(engine: engine, sampleRate: 48000)
            var feeder: CommandFeeder? = program.makeFeeder(origin: 0)
            return OfflineRenderer(engine: engine, sampleRate: 48000, blockSize: blockSize)
                .renderToMemory(frameCount: 96_000, feeder: &feeder).left
        }
        let small = try render(blockSize: 64), large = try render(blockSize: 4096), odd = try render(blockSize: 1000)
        #expect(firstDifference(small, large) == nil)
        #expect(firstDifference(small, odd) == nil)
        // Steps 1 and 2 (1,500 and 3,000) continue the ramp; step 20 (30,000), over a quarter second
        // after the first, restarts it (its declick tail fades the old one out over 96 frames).
        let unit = small[0]
        #expect(unit > 0)
        #expect(abs(small[3_000] / unit - 3_001) < 0.01)
        #expect(abs(small[30_000 + 200] / unit - 201) < 0.01)
    }
}
