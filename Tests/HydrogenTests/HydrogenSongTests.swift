import Foundation
import JACKTestSupport
import SamplerCore
import SoundFiles
import Testing

/// Every demo song Hydrogen ships (Debian's `hydrogen` package: `make test` installs it),
/// imported by `sampler import-hydrogen`, rendered by `sampler render --song` and compared with
/// Hydrogen's own export of the same song by `h2cli` (issue 16).
///
/// Hydrogen randomizes humanized songs on every export (its `rand()` is seeded from the clock),
/// and the `h2cli` Debian ships (1.2.0-beta, built from a 2022-08 snapshot) plays swung 16ths
/// 2,000 frames early (an operator-precedence bug, fixed later). So each song is compared with
/// its humanize and swing set to 0 in a copy; the README says which originals use them.
/// Rendered at 44.1 kHz, the kits' own rate, so that neither side interpolates.
///
/// Ours is clamped to ±1 as Hydrogen's export is. In 50 ms windows wherever Hydrogen's output is
/// above −60 dBFS: the waveform lines up at lag 0
/// (of −3…3 frames, the lag with the smallest difference is within 1 frame: every note in the
/// window starts within a frame of Hydrogen's), the peak is within 1 dB, the level within 1.5 dB.
@Suite(.serialized) struct HydrogenSongTests {
    static let songDirectory = "/usr/share/hydrogen/data/demo_songs"
    static var songs: [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: songDirectory)) ?? []).filter { $0.hasSuffix(".h2song") }.sorted()
    }

    @Test func everyDemoSongMatchesHydrogensOwnExport() throws {
        try requireTestTool("/usr/bin/h2cli", "Debian's hydrogen")
        try #require(!Self.songs.isEmpty, "\(missingTestTool(Self.songDirectory, "Debian's hydrogen: its demo songs"))")
        let dir = try temporaryDirectory()
        let home = dir.appendingPathComponent("home")
        try FileManager.default.createDirectory(at: home, withIntermediateDirectories: true)
        for song in Self.songs {
            let name = String(song.dropLast(".h2song".count))
            var text = try String(contentsOfFile: "\(Self.songDirectory)/\(song)", encoding: .utf8)
            for key in ["humanize_time", "humanize_velocity", "swing_factor"] {
                text = text.replacingOccurrences(of: "<\(key)>[^<]*</\(key)>", with: "<\(key)>0</\(key)>", options: .regularExpression)
            }
            let copy = dir.appendingPathComponent(song).path
            try text.write(toFile: copy, atomically: true, encoding: .utf8)

            // Hydrogen's export: no JACK server needed (it writes through its disk writer); a
            // fresh HOME so that it neither reads nor rewrites the user's preferences.
            let reference = dir.appendingPathComponent("\(name)-hydrogen.wav").path
            let h2 = try runTool(URL(fileURLWithPath: "/usr/bin/h2cli"), ["-s", copy, "-o", reference, "-r", "44100"],
                                 environment: ["HOME": home.path, "JACK_NO_START_SERVER": "1"], timeout: 300)
            guard FileManager.default.fileExists(atPath: reference) else {
                Issue.record("\(song): h2cli wrote nothing (status \(h2.status)): \(h2.stderr.suffix(300))")
                continue
            }
            let expected = try SoundFileLoader().load(path: reference)

            let patch = dir.appendingPathComponent("\(name).json").path
            let imported = try runSampler(["import-hydrogen", copy, "--out", patch], timeout: 60)
            #expect(imported.status == 0, "\(song): \(imported.stderr)")
            let ours = dir.appendingPathComponent("\(name)-sampler.wav").path
            let seconds = String(Double(expected.frameCount) / 44100 + 1)
            let rendered = try runSampler(["render", "--patch", patch, "--song", "--no-loop", "--duration", seconds, "--rate", "44100",
                                           "--out", ours], timeout: 120)
            #expect(rendered.status == 0, "\(song): \(rendered.stderr)")
            let got = try SoundFileLoader().load(path: ours)
            let report = compare(got, expected)
            print("\(song): \(report.summary)")
            #expect(report.windows > 100, "\(song): only \(report.windows) windows with sound")
            #expect(report.misaligned.isEmpty, "\(song): windows not lined up at lag 0: \(report.misaligned.prefix(5))")
            #expect(report.worstPeakDb <= 1, "\(song): a peak differs by \(report.worstPeakDb) dB")
            #expect(report.worstLevelDb <= 1.5, "\(song): a 50 ms level differs by \(report.worstLevelDb) dB")
        }
    }

    struct Report {
        var windows = 0
        var misaligned: [(second: Double, lag: Int)] = []
        var worstPeakDb = 0.0, worstLevelDb = 0.0, meanLevelDb = 0.0
        var summary: String {
            String(format: "%d windows, worst peak %.3f dB, worst level %.3f dB (mean %+.3f dB), %d not at lag 0",
                   windows, worstPeakDb, worstLevelDb, meanLevelDb, misaligned.count)
        }
    }

    func compare(_ a: Sound, _ b: Sound) -> Report {
        let window = 2205  // 50 ms at 44.1 kHz
        let n = min(a.frameCount, b.frameCount)
        let channels = [(a.left, b.left), (a.right, b.right)]
        var r = Report()
        var levelSum = 0.0
        var start = 3
        while start + window + 3 <= n {
            var energyA = 0.0, energyB = 0.0, peakA: Float = 0, peakB: Float = 0
            for (x, y) in channels {
                for i in start..<(start + window) {
                    // Hydrogen's export clamps to ±1 (as its 16-bit file must); ours is float.
                    let xi = min(1, max(-1, x[i]))
                    energyA += Double(xi * xi); energyB += Double(y[i] * y[i])
                    peakA = max(peakA, abs(xi)); peakB = max(peakB, abs(y[i]))
                }
            }
            let levelB = 10 * log10(energyB / Double(2 * window) + 1e-30)
            if levelB > -60 {
                r.windows += 1
                let level = 10 * log10(energyA / Double(2 * window) + 1e-30) - levelB
                levelSum += level
                r.worstLevelDb = max(r.worstLevelDb, abs(level))
                if peakB > 0.01 { r.worstPeakDb = max(r.worstPeakDb, abs(20 * log10(Double(peakA) / Double(peakB)))) }
                // The lag (−3…3) with the smallest largest difference.
                var best = 0, bestError = Float.infinity
                for lag in -3...3 {
                    var error: Float = 0
                    for (x, y) in channels {
                        for i in start..<(start + window) { error = max(error, abs(min(1, max(-1, x[i])) - y[i + lag])) }
                    }
                    if error < bestError { bestError = error; best = lag }
                }
                if abs(best) > 1 { r.misaligned.append((Double(start) / 44100, best)) }
            }
            start += window
        }
        r.meanLevelDb = r.windows > 0 ? levelSum / Double(r.windows) : 0
        return r
    }
}
