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
}
