import Foundation
import JACKTestSupport
import SoundFiles
import Testing

@Suite(.serialized) struct DrumKitLiveTests {
    @Test func aSwungPatternsOnsetsLandOnTheirExactFrames() throws {
        let server = try JACKServer(period: 256)
        defer { server.stop() }
        let kit = try clickKit(bpm: 97, swing: 30, kickSteps: Array(repeating: 100, count: 8))
        let capture = try CaptureProcess(server: server, ports: ["in"], frames: 48000 * 3, name: "cap", connect: false)
        let result = try runSampler(["play", "--patch", kit.path, "--server", server.name, "--name", "sbin",
                                     "--connect", "cap:in_0", "--duration", "4", "--quiet"], timeout: 30)
        #expect(result.status == 0, "\(result.stderr)")
        let origin = try #require(result.stdout.range(of: #"from device frame \d+"#, options: .regularExpression)
            .flatMap { Int64(result.stdout[$0].split(separator: " ").last!) })
        let onsets = try capture.finish().onsets(channel: 0)
        #expect(onsets.count >= 16)
        // Each play starts where the last ended (summed unrounded); a step is rounded once.
        let step = 60.0 * 48000 / (97 * 4)
        var expected: [Int64] = []
        var playStart = 0.0
        while expected.count < onsets.count {
            for k in 0..<8 where expected.count < onsets.count {
                expected.append(origin + Int64((playStart + (Double(k) + (k % 2 == 1 ? 0.3 : 0)) * step).rounded()))
            }
            playStart += 8 * step
        }
        #expect(onsets == expected, "onset errors: \(zip(onsets, expected).map { $0 - $1 })")
    }

    @Test func midiNoteOnsStartTheirInstrumentExactlyOnePeriodLater() throws {
        let period: Int64 = 256
        let server = try JACKServer(period: Int(period))
        defer { server.stop() }
        // A silent pattern: only MIDI plays.
        let kit = try clickKit(bpm: 120, swing: 0, kickSteps: Array(repeating: 0, count: 8))
        let capture = try CaptureProcess(server: server, ports: ["l", "r"], frames: 48000 * 3, name: "cap", connect: false)
        let sampler = try BackgroundProgram(productsDirectory.appendingPathComponent("sampler"),
                                            ["play", "--patch", kit.path, "--server", server.name, "--name", "sbin",
                                             "--connect", "cap:in_0,cap:in_1", "--duration", "4", "--quiet"], timeout: 30)
        // The sampler runs before the first note is sent (one sent earlier is lost, not late).
        #expect(server.waitUntilConnected("sbin:out_L", to: "cap:in_0"), "the sampler did not connect its outputs")
        let sender = try BackgroundProgram(productsDirectory.appendingPathComponent("sampler-midi-send"),
                                           ["--server", server.name, "--to", "sbin:midi_in", "--offsets", "0,100,255,17,200",
                                            "--notes", "36,36,50,36,50", "--velocity", "127"], timeout: 20)
        let sent = sender.finish()
        #expect(sent.status == 0, "\(sent.output)")
        let recording = try capture.finish()
        let played = sampler.finish()
        #expect(played.status == 0, "\(played.output)")
        // "sent NOTE at FRAME"
        let notes = sent.output.split(separator: "\n").filter { $0.hasPrefix("sent ") }.map { line in
            let words = line.split(separator: " ")
            return (note: Int(words[1])!, frame: Int64(words[3])!)
        }
        #expect(notes.count == 5)
        let kicks = recording.onsets(channel: 0), snares = recording.onsets(channel: 1)
        #expect(kicks == notes.filter { $0.note == 36 }.map { $0.frame + period },
                "kick onset errors: \(zip(kicks, notes.filter { $0.note == 36 }).map { $0 - $1.frame - period })")
        #expect(snares == notes.filter { $0.note == 50 }.map { $0.frame + period },
                "snare onset errors: \(zip(snares, notes.filter { $0.note == 50 }).map { $0 - $1.frame - period })")
    }

    @Test func theDemoKitsValidateAndRender() throws {
        let dir = try temporaryDirectory()
        for name in ["drums.json", "shuffle.json"] {
            let patch = packageRoot.appendingPathComponent("Patches/\(name)").path
            let v = try runSampler(["validate", patch], timeout: 30)
            #expect(v.status == 0 && v.stdout.contains("OK: version 2"), "\(v.stderr)")
            let out = dir.appendingPathComponent("\(name).wav").path
            let r = try runSampler(["render", "--patch", patch, "--song", "--duration", "2", "--out", out], timeout: 30)
            #expect(r.status == 0, "\(r.stderr)")
            let sound = try SoundFileLoader().load(path: out)
            #expect(sound.frameCount == 96000 && sound.samples(channel: 0).contains { abs($0) > 0.05 })
        }
    }

    @Test func patternAndSongOptionsSayWhatIsWrong() throws {
        let drums = packageRoot.appendingPathComponent("Patches/drums.json").path
        let v1 = packageRoot.appendingPathComponent("Patches/drums-v1.json").path
        let out = try temporaryDirectory().appendingPathComponent("o.wav").path
        let both = try runSampler(["render", "--patch", drums, "--pattern", "fill", "--song", "--duration", "1", "--out", out])
        #expect(both.status == 64 && both.stderr.contains("--pattern and --song cannot be used together"))
        let unknown = try runSampler(["render", "--patch", drums, "--pattern", "chorus", "--duration", "1", "--out", out])
        #expect(unknown.status == 1)
        #expect(unknown.stderr == "sampler: error: \(drums): --pattern: no pattern named \"chorus\" (expected one of: groove, fill)\n")
        let old = try runSampler(["render", "--patch", v1, "--song", "--duration", "1", "--out", out])
        #expect(old.status == 1 && old.stderr == "sampler: error: \(v1): --song: the patch has no \"song\"\n", "\(old.stderr)")
        let once = try runSampler(["render", "--patch", drums, "--pattern", "fill", "--no-loop", "--duration", "1", "--out", out])
        #expect(once.status == 0, "\(once.stderr)")
    }
}
