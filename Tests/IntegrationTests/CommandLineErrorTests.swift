import Foundation
import JACKTestSupport
import SoundFiles
import Testing

/// Bad input gets one clear line on stderr and a non-zero exit, never a crash or a hang.
@Suite struct CommandLineErrorTests {
    func expectError(_ args: [String], status: Int32, _ message: String, environment: [String: String] = [:]) throws {
        let r = try runSampler(args, environment: environment, timeout: 20)
        #expect(r.status == status, "\(args): exit \(r.status), stderr: \(r.stderr)")
        let lines = r.stderr.split(separator: "\n")
        #expect(lines.count == 1, "\(args): expected one line, got: \(r.stderr)")
        #expect(r.stderr.contains(message), "\(args): \(r.stderr)")
    }

    @Test func aPatchWhoseSoundsExceedTheMemoryBudgetIsRefusedSayingWhatItNeeds() throws {
        let dir = try temporaryDirectory()
        try WAVFileWriter.write(path: dir.appendingPathComponent("long.wav").path,
                                channels: [[Float](repeating: 0.1, count: 48000 * 6)], sampleRate: 48000, format: .pcm16)
        let patch = dir.appendingPathComponent("p.json")
        try """
        {"version": 1, "tempo": 120, "sounds": {"l": "long.wav"}, "players": [{"id": "a", "sound": "l"}]}
        """.write(to: patch, atomically: true, encoding: .utf8)
        try expectError(["render", "--patch", patch.path, "--duration", "1", "--out", dir.appendingPathComponent("o.wav").path], status: 1,
                        "\(patch.path): its sounds need 2 MB decoded in memory, more than the budget of 1 MB (SAMPLER_MEMORY_BUDGET_MB raises it",
                        environment: ["SAMPLER_MEMORY_BUDGET_MB": "1"])
        // With the budget raised, it renders.
        let r = try runSampler(["render", "--patch", patch.path, "--duration", "1", "--out", dir.appendingPathComponent("o.wav").path],
                               environment: ["SAMPLER_MEMORY_BUDGET_MB": "4"], timeout: 20)
        #expect(r.status == 0, "\(r.stderr)")
    }

    /// Every decoded copy counts against the budget: a sample cut at 128 offsets is 128 copies,
    /// one resampled to 4 tunings 4 copies (issue 52: 128 offsets of one file loaded 508 MB under
    /// a 16 MB budget, 128 tunings took 165 s and 1 GB; a sample on more than 4 keys is now held
    /// once).
    @Test func everyDecodedCopyCountsAgainstTheBudget() throws {
        let dir = try temporaryDirectory()
        try WAVFileWriter.write(path: dir.appendingPathComponent("long.wav").path,
                                channels: [[Float](repeating: 0.1, count: 48000 * 2)], sampleRate: 48000, format: .pcm16)
        let offsets = dir.appendingPathComponent("offsets.sfz")
        try (0..<128).map { "<region> sample=long.wav key=\($0) offset=\($0)" }.joined(separator: "\n")
            .write(to: offsets, atomically: true, encoding: .utf8)
        try expectError(["render", "--patch", offsets.path, "--duration", "1", "--out", dir.appendingPathComponent("o.wav").path], status: 1,
                        "\(offsets.path): its samples need 47 MB decoded in memory, more than the budget of 16 MB",
                        environment: ["SAMPLER_MEMORY_BUDGET_MB": "16"])
        // Four tunings of a 4 s sample, one to four octaves down, are resampled copies 8, 16,
        // 32 and 64 s long: 23 MB.
        try WAVFileWriter.write(path: dir.appendingPathComponent("longer.wav").path,
                                channels: [[Float](repeating: 0.1, count: 48000 * 4)], sampleRate: 48000, format: .pcm16)
        let tunes = dir.appendingPathComponent("tunes.sfz")
        try [12, 24, 36, 48].map { "<region> sample=longer.wav key=\($0) pitch_keycenter=60" }.joined(separator: "\n")
            .write(to: tunes, atomically: true, encoding: .utf8)
        try expectError(["render", "--patch", tunes.path, "--duration", "1", "--out", dir.appendingPathComponent("o.wav").path], status: 1,
                        "\(tunes.path): its samples need",
                        environment: ["SAMPLER_MEMORY_BUDGET_MB": "16"])
        // 48 tunings of one sample are held once, its voices tuned (`LoadedPatch.pitchedInVoices`):
        // within the budget.
        let keys = dir.appendingPathComponent("keys.sfz")
        try (0..<48).map { "<region> sample=long.wav key=\($0 + 12) pitch_keycenter=60" }.joined(separator: "\n")
            .write(to: keys, atomically: true, encoding: .utf8)
        let r = try runSampler(["render", "--patch", keys.path, "--duration", "1", "--out", dir.appendingPathComponent("o.wav").path],
                               environment: ["SAMPLER_MEMORY_BUDGET_MB": "16"], timeout: 20)
        #expect(r.status == 0, "\(r.stderr)")
    }

    /// A streamed library's loops longer than half a ring are kept whole while voices play
    /// them: the most the voices can keep (one each) counts against the budget with the heads
    /// and rings.
    @Test func theLoopsAStreamedLibraryKeepsCountAgainstTheBudget() throws {
        let dir = try temporaryDirectory()
        var regions: [String] = []
        for k in 0..<8 {
            try WAVFileWriter.write(path: dir.appendingPathComponent("pad\(k).wav").path,
                                    channels: [(0..<(48000 * 12)).map { Float(($0 + k) % 200) / 400 }], sampleRate: 48000, format: .pcm16)
            regions.append("<region> sample=pad\(k).wav key=\(60 + k) loop_mode=loop_continuous loop_start=48000 loop_end=527999")
        }
        let sfz = dir.appendingPathComponent("pads.sfz")
        try regions.joined(separator: "\n").write(to: sfz, atomically: true, encoding: .utf8)
        // Heads (8 × 32 kB) and 4 mono rings of 16,384 frames (256 kB) fit 6 MB; with a 10 s
        // loop kept by each of the 4 voices (7.7 MB) they do not.
        let args = ["render", "--patch", sfz.path, "--duration", "1", "--out", dir.appendingPathComponent("o.wav").path,
                    "--stream-tails-above", "0", "--stream-ring-frames", "16384", "--stream-voices", "4"]
        try expectError(args, status: 1, "and the loops they keep", environment: ["SAMPLER_MEMORY_BUDGET_MB": "6"])
        let r = try runSampler(args, environment: ["SAMPLER_MEMORY_BUDGET_MB": "12"], timeout: 20)
        #expect(r.status == 0, "\(r.stderr)")
    }

    @Test func filesOverTheirSizeLimitAreRefusedBeforeTheyAreRead() throws {
        let dir = try temporaryDirectory()
        let map = dir.appendingPathComponent("long.map")
        try Data(repeating: UInt8(ascii: "#"), count: (1 << 20) + 1).write(to: map)
        try expectError(["metronome", "--map", map.path, "--render", dir.appendingPathComponent("o.wav").path], status: 1,
                        "\(map.path): the file is 1024 KB; a tempo map is at most 1 MB")
        let patch = dir.appendingPathComponent("big.json")
        try Data(repeating: UInt8(ascii: " "), count: (16 << 20) + 1).write(to: patch)
        try expectError(["validate", patch.path], status: 1, "\(patch.path): the file is 16 MB; a patch is at most 16 MB")
        let kit = dir.appendingPathComponent("drumkit.xml")
        try Data(repeating: UInt8(ascii: " "), count: (16 << 20) + 1).write(to: kit)
        try expectError(["import-hydrogen", kit.path, "--out", dir.appendingPathComponent("k.json").path], status: 1,
                        "\(kit.path): the file is 16 MB; a drumkit.xml is at most 16 MB")
    }

    /// The soak tool writes its reload log only when the run ends: a path it cannot write is
    /// refused at start, before any JACK client is opened, not an hour later.
    @Test func theSoakToolRefusesAReloadLogItCannotWriteAtOnce() throws {
        let log = try temporaryDirectory().appendingPathComponent("missing/reloads.log").path
        let r = try runTool(productsDirectory.appendingPathComponent("sampler-soak"),
                            ["--seconds", "3600", "--patch", "Patches/drums.json", "--reload-log", log],
                            environment: ["JACK_DEFAULT_SERVER": "sampler-no-such-server-\(getpid())", "JACK_NO_START_SERVER": "1"],
                            timeout: 20)
        #expect(r.status == 2, "exit \(r.status), stderr: \(r.stderr)")
        #expect(r.stderr == "sampler-soak: \(log): cannot write the reload log\n", "\(r.stderr)")
    }

    @Test func unknownOptionNamesIt() throws {
        try expectError(["--bogus"], status: 64, "sampler: error: Unknown option '--bogus'")
    }

    @Test func badOptionValuesSayWhatWasExpected() throws {
        try expectError(["--tempo", "0"], status: 64, "--tempo must be a number between 1 and 1000, got 0.0")
        try expectError(["render", "--tempo", "1e-300", "--duration", "1", "--out", "/tmp/x.wav"], status: 64,
                        "--tempo must be a number between 1 and 1000, got 1e-300")
        try expectError(["--tempo", "fast"], status: 64, "--tempo")
        try expectError(["play", "--duration", "0"], status: 64, "--duration must be a positive number of seconds, at most 31622400 (a year), got 0.0")
        try expectError(["play", "--duration", "1e16"], status: 64, "--duration must be a positive number of seconds, at most 31622400 (a year), got 1e+16")
        try expectError(["render", "--duration", "90000", "--out", "/tmp/x.wav"], status: 64,
                        "--duration must be a number of seconds greater than 0 and at most 86400, got 90000.0")
        try expectError(["play", "--connect", "a,b,c"], status: 64, "--connect expects one or two port names")
        try expectError(["play", "--no-connect", "--connect", "a"], status: 64, "--no-connect and --connect cannot be used together")
        // The metronome shares play's JACK options and render's formats.
        try expectError(["metronome", "--no-connect", "--connect", "a"], status: 64, "--no-connect and --connect cannot be used together")
        try expectError(["metronome", "--name", ""], status: 64, "--name must not be empty")
        try expectError(["metronome", "--render", "/tmp/x.wav", "--duration", "1", "--format", "wav"], status: 64,
                        "--format must be float32, pcm24 or pcm16, got \"wav\"")
        try expectError(["render", "--duration", "1", "--out", "/tmp/x.wav", "--format", "mp3"], status: 64,
                        "--format must be float32, pcm24 or pcm16, got \"mp3\"")
        try expectError(["render", "--duration", "1", "--out", "/tmp/x.wav", "--rate", "100"], status: 64,
                        "--rate must be between 8000 and 384000 Hz, got 100")
        try expectError(["render", "--duration", "1", "--out", "/tmp/x.wav", "--stream-head-frames", "10"], status: 64,
                        "--stream-head-frames must be from 64 to 1048576, got 10")
        try expectError(["play", "--stream-voices", "0"], status: 64, "--stream-voices must be from 1 to 4096, got 0")
        try expectError(["render", "--duration", "1", "--out", "/tmp/x.wav", "--stream-ring-frames", "4095"], status: 64,
                        "--stream-ring-frames must be from 4096 to 16777216, got 4095")
        try expectError(["play", "--stream-ring-frames", "16777217"], status: 64,
                        "--stream-ring-frames must be from 4096 to 16777216, got 16777217")
    }

    @Test func missingPatchFileIsNamed() throws {
        try expectError(["validate", "/nonexistent/p.json"], status: 1, "sampler: error: /nonexistent/p.json: cannot read the file (no such file)")
    }

    @Test func wrongPatchValueNamesTheJSONPath() throws {
        let dir = try temporaryDirectory()
        let file = dir.appendingPathComponent("drums.json")
        try """
        {"version": 1, "tempo": 120, "sounds": {"k": "k.wav"},
         "players": [{"id": "a", "sound": "k"}, {"id": "b", "sound": "k"}, {"id": "c", "sound": "k", "pan": "left"}]}
        """.write(to: file, atomically: true, encoding: .utf8)
        try expectError(["validate", file.path], status: 1, "\(file.path): players[2].pan: expected a number between -1 and 1, got \"left\"")
        try expectError(["render", "--patch", file.path, "--duration", "1", "--out", dir.appendingPathComponent("o.wav").path],
                        status: 1, "players[2].pan")
    }

    @Test func missingAndCorruptSoundFilesAreNamed() throws {
        let dir = try temporaryDirectory()
        let patch = dir.appendingPathComponent("kit.json")
        try #"{"version": 1, "tempo": 100, "sounds": {"kick": "kick.wav"}, "players": [{"id": "k", "sound": "kick"}]}"#
            .write(to: patch, atomically: true, encoding: .utf8)
        let sound = dir.appendingPathComponent("kick.wav").path
        try expectError(["validate", patch.path], status: 1, "sounds.kick: \(sound): no such file")
        try Data((0..<4096).map { UInt8(truncatingIfNeeded: $0 &* 2654435761 >> 7) }).write(to: URL(fileURLWithPath: sound))
        try expectError(["validate", patch.path], status: 1, "sounds.kick: \(sound): not an audio file")
        try expectError(["render", "--patch", patch.path, "--duration", "1", "--out", dir.appendingPathComponent("o.wav").path],
                        status: 1, "sounds.kick: \(sound): not an audio file")
    }

    @Test func unwritableRenderOutputIsNamed() throws {
        try expectError(["render", "--patch", packageRoot.appendingPathComponent("Patches/drums.json").path,
                         "--duration", "1", "--out", "/nonexistent/dir/out.wav"], status: 1, "/nonexistent/dir/out.wav")
    }

    @Test func noJACKServerExplainsHowToStartOne() throws {
        let name = "sampler-absent-\(getpid())"
        try expectError(["play", "--patch", packageRoot.appendingPathComponent("Patches/drums.json").path, "--server", name,
                         "--duration", "1"], status: 1, "no JACK server \"\(name)\" is running: start one")
    }
}
