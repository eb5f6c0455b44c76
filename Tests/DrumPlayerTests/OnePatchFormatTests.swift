import Foundation
import JACKTestSupport
import Patches
import SamplerCore
@testable import DrumPlayer
import ProgramHost
import Scheduling
import SoundFiles
import Testing

/// One patch format, one path to the engine (issue 16): a version 1 patch, its conversion to the
/// current format and a version 2 patch with streamed samples render the frames they should.
@Suite struct OnePatchFormatTests {
    func render(_ patch: Patch, frames: Int, streaming: PatchStreamingOptions = .init(),
                selection: PatchSelection = .automatic) throws -> (left: [Float], right: [Float]) {
        var program = try PatchProgram(kit: patch, selection: selection, streaming: streaming)
        let engine = Engine(configuration: .init(maxPlayers: program.playerCount))
        try program.prepare(engine: engine, sampleRate: 48000)
        var feeder: CommandFeeder? = program.makeFeeder(origin: 0)
        return OfflineRenderer(engine: engine, sampleRate: 48000).renderToMemory(frameCount: frames, feeder: &feeder)
    }

    /// `patch` written in the current format into `directory` and read back from there.
    func converted(_ patch: Patch, into directory: URL) throws -> Patch {
        let text = patch.withSamplePaths(relativeTo: directory.path).patchJSON()
        let path = directory.appendingPathComponent("converted.json").path
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        return try PatchLoader.load(path: path)
    }

    @Test func theVersionOneDemoAndItsConversionRenderTheSameFrames() throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let old = try PatchLoader.load(path: packageRoot.appendingPathComponent("Patches/drums-v1.json").path)
        let new = try converted(old, into: directory)
        #expect(old.version == 1 && new.version == 2)
        // The relative paths were rewritten to name the same files from the temporary directory.
        #expect(new.samplePaths.map(\.resolvedPath) == old.samplePaths.map(\.resolvedPath))
        #expect(new.samplePaths.allSatisfy { !$0.path.hasPrefix("/") })
        let a = try render(old, frames: 4 * 48000), b = try render(new, frames: 4 * 48000)
        #expect(a.left.contains { $0 != 0 })
        #expect(firstDifference(a.left, b.left) == nil && firstDifference(a.right, b.right) == nil)
    }

    /// What a version 1 file says that version 2 had no words for survives the conversion:
    /// streaming, silence (gain 0), a gain above +24 dB, a pattern that ends inside its bar, and
    /// no pattern at all.
    @Test func everythingAVersionOnePatchSaysIsWrittenBack() throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let ramp = (0..<4800).map { Float($0 + 1) / 100_000 }
        try WAVFileWriter.write(path: directory.appendingPathComponent("ramp.wav").path, channels: [ramp], sampleRate: 48000)
        let json = """
            { "version": 1, "tempo": 100, "sounds": { "ramp": "ramp.wav" },
              "players": [ { "id": "streamed", "sound": "ramp", "stream": true, "loops": 1 },
                           { "id": "silent", "sound": "ramp", "gain": 0 },
                           { "id": "loud", "sound": "ramp", "gain": 16, "pan": 0.5, "preload": true } ],
              "pattern": { "stepsPerBeat": 4, "steps": [["streamed", "loud"], ["silent"], []] } }
            """
        let path = directory.appendingPathComponent("old.json").path
        try json.write(toFile: path, atomically: true, encoding: .utf8)
        let old = try PatchLoader.load(path: path)
        let sub = directory.appendingPathComponent("sub")
        try FileManager.default.createDirectory(at: sub, withIntermediateDirectories: true)
        let text = old.withSamplePaths(relativeTo: sub.path).patchJSON()
        #expect(text.contains(#"{ "path": "../ramp.wav", "stream": true }"#), "\(text)")
        #expect(text.contains(#""gain": 0"#) && text.contains(#""gain": 16"#) && text.contains(#""stepCount": 3"#), "\(text)")
        let new = try converted(old, into: sub)
        #expect(new.instruments.map(\.layers[0].samples[0].loading) == [.stream, .automatic, .preload])
        #expect(new.instruments[1].gainDb == -.infinity && new.patterns[0].stepCount == 3)
        let a = try render(old, frames: 48000), b = try render(new, frames: 48000)
        #expect(a.left.contains { $0 != 0 })
        #expect(firstDifference(a.left, b.left) == nil && firstDifference(a.right, b.right) == nil)
        // The pattern is 3 sixteenths long at 100 bpm: 3 × 7200 frames.
        let onsets = a.right.indices.filter { a.right[$0] != 0 && ($0 == 0 || a.right[$0 - 1] == 0) }
        #expect(onsets.prefix(3) == [0, 21600, 43200])

        // Without a pattern every player plays once, from the start, and the conversion has no
        // "patterns" key at all.
        let onceJSON = json.replacingOccurrences(of: #""pattern": { "stepsPerBeat": 4, "steps": [["streamed", "loud"], ["silent"], []] }"#,
                                                 with: #""tempo": 100"#).replacingOccurrences(of: #""tempo": 100, "sounds""#, with: #""sounds""#)
        let once = try PatchLoader.decode(Data(onceJSON.utf8), file: "once.json", baseDirectory: directory.path)
        #expect(once.patterns.isEmpty && !once.patchJSON().contains("patterns"))
        let c = try render(once, frames: 48000), d = try render(try converted(once, into: sub), frames: 48000)
        #expect(firstDifference(c.left, d.left) == nil && firstDifference(c.right, d.right) == nil)
        // The streamed ramp plays twice (loops 1) and the loud one once, then silence.
        #expect(c.left[0] != 0 && c.left[4800] != 0 && c.left[9600] == 0)
    }

    /// A version 2 instrument whose only sample streams renders the same frames as the same
    /// sample decoded into memory, retriggered before it ends and looping.
    @Test func aStreamedVersionTwoSampleRendersTheSameFramesAsADecodedOne() throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let ramp = (0..<72_000).map { Float($0 + 1) / 1_000_000 }
        try WAVFileWriter.write(path: directory.appendingPathComponent("ramp.wav").path, channels: [ramp], sampleRate: 48000)
        let steps = "[90" + String(repeating: ", 0", count: 15) + "]"
        let json = """
            { "version": 2, "tempo": 120,
              "instruments": [
                { "id": "streamed", "pan": -1, "loops": 1, "layers": [ { "samples": [ { "path": "ramp.wav", "stream": true } ] } ] },
                { "id": "memory", "pan": 1, "loops": 1, "layers": [ { "samples": [ { "path": "ramp.wav", "preload": true } ] } ] } ],
              "patterns": [ { "name": "bar", "tracks": { "streamed": \(steps), "memory": \(steps) } } ] }
            """
        let path = directory.appendingPathComponent("stream.json").path
        try json.write(toFile: path, atomically: true, encoding: .utf8)
        let patch = try PatchLoader.load(path: path)
        let loaded = try LoadedPatch(patch, engine: Engine(), sampleRate: 48000)
        #expect(loaded.streams(instrument: 0) && !loaded.streams(instrument: 1))
        let out = try render(patch, frames: 7 * 48000)
        #expect(abs(out.right[0] - Float(90) / 127 * 1e-6) < 1e-12)
        #expect(firstDifference(out.left, out.right) == nil)
    }

    @Test func aStreamedSampleMustBeItsInstrumentsOnlyUntunedSample() throws {
        func error(_ instrument: String) -> String? {
            let json = #"{ "version": 2, "tempo": 120, "instruments": [ \#(instrument) ] }"#
            do {
                let patch = try PatchLoader.decode(Data(json.utf8), file: "k.json", baseDirectory: "/tmp")
                _ = try LoadedPatch(patch, engine: Engine(), sampleRate: 48000)
                return nil
            } catch {
                return "\(error)"
            }
        }
        #expect(error(#"{ "id": "a", "layers": [ { "samples": ["x.wav", { "path": "y.wav", "stream": true }] } ] }"#)
                == "k.json: instruments[0].layers[0].samples[1]: a streamed sample must be its instrument's only sample (one layer, one sample)")
        #expect(error(#"{ "id": "a", "layers": [ { "samples": ["x.wav"] }, { "samples": [ { "path": "y.wav", "stream": true } ] } ] }"#)
                == "k.json: instruments[0].layers[1].samples[0]: a streamed sample must be its instrument's only sample (one layer, one sample)")
        #expect(error(#"{ "id": "a", "layers": [ { "samples": [ { "path": "y.wav", "stream": true, "preload": true } ] } ] }"#)
                == #"k.json: instruments[0].layers[0].samples[0]: give either "stream" or "preload", not both"#)
        #expect(error(#"{ "id": "a", "layers": [ { "samples": [ { "path": "y.wav", "looping": true } ] } ] }"#)?
            .hasPrefix("k.json: instruments[0].layers[0].samples[0].looping: unknown key") == true)
        #expect(error(#"{ "id": "a", "layers": [ { "samples": [ { "path": "y.wav", "loop": true } ] } ] }"#)
                == "k.json: instruments[0].layers[0].samples[0].loop: expected an array, got true")
        #expect(error(#"{ "id": "a", "layers": [ { "samples": [ { "path": "y.wav", "offset": 10, "loop": [5, 20] } ] } ] }"#)
                == "k.json: instruments[0].layers[0].samples[0].loop: expected [first, last] frames of the file, offset ≤ first ≤ last (≤ end), got [5, 20] with offset 10")
        #expect(error(#"{ "id": "a", "layers": [ { "samples": [ { "path": "y.wav", "stream": true, "loop": [5, 20] } ] } ] }"#)
                == #"k.json: instruments[0].layers[0].samples[0]: a streamed sample plays the whole file forwards: "offset", "end", "reverse", "loop" and "data" need it in memory"#)
        #expect(error(#"{ "id": "a", "tune": 2, "layers": [ { "samples": [ { "path": "/nonexistent/y.wav", "stream": true } ] } ] }"#)
                == #"k.json: instruments[0].layers[0].samples[0]: a streamed sample cannot be tuned ("tune": 2.0)"#)
        #expect(error(#"{ "id": "a", "gain": 1, "gainDb": 0, "layers": [ { "samples": ["x.wav"] } ] }"#)
                == #"k.json: instruments[0]: give either "gain" or "gainDb", not both"#)
    }
}
