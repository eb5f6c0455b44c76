import Foundation
import JACKTestSupport
import SoundFiles
import Testing

/// `sampler render` through the binary.
@Suite struct CommandLineRenderTests {
    @Test func renderPutsOnsetsOnTheExactFramesAndIsDeterministic() throws {
        let patch = try clickPatch(bpm: 97.3)
        let dir = patch.deletingLastPathComponent()
        let a = dir.appendingPathComponent("a.wav").path, b = dir.appendingPathComponent("b.wav").path
        for out in [a, b] {
            let r = try runSampler(["render", "--patch", patch.path, "--duration", "10", "--out", out])
            #expect(r.status == 0, "\(r.stderr)")
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: a)) == Data(contentsOf: URL(fileURLWithPath: b)))
        let left = try SoundFileLoader().load(path: a).samples(channel: 0)
        let capture = Capture(firstFrame: 0, sampleRate: 48000, channels: [left])
        let expected = (0..<17).map { Int64((Double($0) * 60 * 48000 / 97.3).rounded()) }
        #expect(capture.onsets(channel: 0) == expected)
    }

    /// A library that streams tails keeps its heads locked in memory; where the limit on locked
    /// memory refuses it (`ulimit -l`, here 0 and, as root, without CAP_IPC_LOCK), one warning
    /// says how much was not locked, the limit and what to raise, and the render goes on.
    @Test func headsThatCannotBeLockedAreNamedAndTheRenderGoesOn() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        try WAVFileWriter.write(path: dir.appendingPathComponent("long.wav").path,
                                channels: [(0..<96_000).map { Float($0 % 100) / 200 }], sampleRate: 48_000, format: .pcm16)
        // Three one-shots too short to stream (under four heads): whole in memory, no head kept
        // for them (the heads' size counts the long sample's only).
        for k in 0..<3 {
            try WAVFileWriter.write(path: dir.appendingPathComponent("hit\(k).wav").path,
                                    channels: [(0..<10_000).map { Float($0 % 50) / 100 }], sampleRate: 48_000, format: .pcm16)
        }
        let patch = dir.appendingPathComponent("p.json")
        try (#"{"version": 2, "tempo": 120, "instruments": [ { "id": "a", "layers": [ { "samples": ["long.wav"] } ] }"#
            + (0..<3).map { #", { "id": "h\#($0)", "layers": [ { "samples": ["hit\#($0).wav"] } ] }"# }.joined() + "]}")
            .write(to: patch, atomically: true, encoding: .utf8)
        let render = [productsDirectory.appendingPathComponent("sampler").path, "render", "--patch", patch.path,
                      "--stream-tails-above", "0", "--duration", "0.5", "--out", dir.appendingPathComponent("o.wav").path]
        let limited = try runTool(URL(fileURLWithPath: "/usr/bin/prlimit"),
                                  ["--memlock=0:0"] + (getuid() == 0 ? ["/usr/bin/setpriv", "--bounding-set=-ipc_lock"] : []) + render)
        #expect(limited.status == 0, "\(limited.stderr)")
        #expect(limited.stderr.contains("p.json: 36 kB of 36 kB of sample heads not locked in memory (mlock: "), "\(limited.stderr)")
        #expect(limited.stderr.contains("locked memory is limited to 0 kB: raise it with ulimit -l"), "\(limited.stderr)")
        let free = try runSampler(Array(render.dropFirst()))
        #expect(free.status == 0 && !free.stderr.contains("not locked"), "\(free.stderr)")
    }
}
