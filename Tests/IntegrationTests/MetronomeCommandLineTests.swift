import Foundation
import JACKTestSupport
import SamplerCore
import SoundFiles
import Testing

/// `sampler metronome` on the command line: one-line errors for bad input, offline rendering,
/// and a live run that ends with its music.
@Suite struct MetronomeCommandLineTests {
    func expectError(_ args: [String], status: Int32, _ message: String) throws {
        let r = try runSampler(["metronome"] + args, timeout: 20)
        #expect(r.status == status, "\(args): exit \(r.status), stderr: \(r.stderr)")
        let lines = r.stderr.split(separator: "\n")
        #expect(lines.count == 1, "\(args): expected one line, got: \(r.stderr)")
        #expect(r.stderr.hasPrefix("sampler: error: ") && r.stderr.contains(message), "\(args): \(r.stderr)")
    }

    @Test func badTempoMeterAndAccentsAreOneLineErrors() throws {
        try expectError(["0"], status: 64, "tempo must be between 1 and 1000 bpm, got 0")
        try expectError(["1000.5"], status: 64, "tempo must be between 1 and 1000 bpm, got 1000.5")
        try expectError(["fast"], status: 64, "expected a tempo like 120")
        try expectError(["120", "--meter", "0/4"], status: 64, "--meter: the meter needs 1 to 256 beats per bar, got 0")
        try expectError(["120", "--meter", "4/0"], status: 64, "--meter: the meter's note value must be 1 to 256, got 0")
        try expectError(["120", "--accents", "X.y."], status: 64, "--accents: unknown accent character \"y\"")
        try expectError(["120", "--subdivide", "0"], status: 64, "--subdivide must be 1 to 16")
        try expectError(["120", "--transport", "sometimes"], status: 64, "--transport must be off, follow or master")
        try expectError(["120", "--bars", "0"], status: 64, "--bars must be a positive number of bars")
        try expectError(["120", "--render", "/tmp/never.wav", "--duration", "1", "--transport", "follow"], status: 64,
                        "--render plays no transport: leave out --transport")
        try expectError(["120", "--render", "/tmp/never.wav", "--duration", "1", "--rate", "100"], status: 64,
                        "--rate must be between 8000 and 384000 Hz, got 100")
        try expectError(["120", "--render", "/tmp/never.wav", "--duration", "90000"], status: 64,
                        "--duration must be a number of seconds greater than 0 and at most 86400, got 90000.0")
        // 10,000,000 bars of 256 whole notes at 1 bpm: refused, not rendered for ever.
        try expectError(["1", "--meter", "256/1", "--bars", "10000000", "--render", "/tmp/never.wav"], status: 1,
                        "--render: the clicks last 614400000000 s, more than 24 hours (86400 s)")
    }

    @Test func unreadableFilesAndMalformedMapsNameTheFile() throws {
        let dir = try temporaryDirectory()
        let out = dir.appendingPathComponent("o.wav").path
        try expectError(["120", "--sound", "/nonexistent/tick.wav", "--render", out, "--duration", "1"], status: 1,
                        "--sound: /nonexistent/tick.wav: no such file")
        let map = dir.appendingPathComponent("song.map")
        try "intro: 4 120\n\n  2 3/4 90 Xo.  # typo\n".write(to: map, atomically: true, encoding: .utf8)
        try expectError(["--map", map.path, "--render", out], status: 1, "\(map.path):3:13: unknown accent character \"o\"")
        try expectError(["--map", dir.appendingPathComponent("none.map").path, "--render", out], status: 1, "cannot read the tempo map (no such file)")
        try expectError(["120", "--render", out], status: 1, "--render needs --duration or --bars: the clicks never end")
    }

    @Test func renderWritesTheBarsAskedForOnTheirFrames() throws {
        let dir = try temporaryDirectory()
        let out = dir.appendingPathComponent("click.wav").path
        let r = try runSampler(["metronome", "113", "--meter", "3/4", "--bars", "5", "--render", out, "--rate", "44100"])
        #expect(r.status == 0, "\(r.stderr)")
        let sound = try SoundFileLoader().load(path: out)
        // Five bars of 3/4 at 113 bpm: 15 beats, the file ending where the 16th would be.
        let beat = 60 * 44100 / 113.0
        #expect(sound.frameCount == Int((15 * beat).rounded()))
        var onsets: [Int] = []
        var quiet = Int.max
        for (i, x) in sound.samples(channel: 0).enumerated() {
            if abs(x) > 0.02 { if quiet >= 300 { onsets.append(i) }; quiet = 0 } else if quiet < Int.max { quiet += 1 }
        }
        #expect(onsets == (0..<15).map { Int((Double($0) * beat).rounded()) })
    }

    @Test func aLiveMetronomeStopsAtTheEndOfItsBars() throws {
        let server = try JACKServer(period: 256)
        defer { server.stop() }
        let r = try runSampler(["metronome", "240", "--bars", "2", "--server", server.name, "--no-connect", "--quiet"], timeout: 20)
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout.contains("8 clicks, 0 late"), "\(r.stdout)")
        // Two bars at 240 bpm last 2 s.
        #expect(r.seconds < 6)
    }
}
