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
}
