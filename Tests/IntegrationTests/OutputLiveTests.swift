import Foundation
import JACKTestSupport
import SoundFiles
import Testing

/// An output per instrument (issue 36): each named output's ports, captured by the independent
/// witness, equal that output's stem from `sampler render --stems` on the device timeline; the
/// stems and the main mix add up to the render of the patch with every instrument on the main mix.
@Suite(.serialized) struct OutputLiveTests {
    /// Patches/drums.json with the kick on output "kick" and snare and clap on "snares" (or, with
    /// `routed` false, every instrument on the main mix), its samples named by absolute path.
    static func drums(routed: Bool, in dir: URL) throws -> URL {
        let root = packageRoot.appendingPathComponent("Patches")
        let data = try Data(contentsOf: root.appendingPathComponent("drums.json"))
        var kit = try #require(JSONSerialization.jsonObject(with: data) as? [String: Any])
        var instruments = try #require(kit["instruments"] as? [[String: Any]])
        for i in instruments.indices {
            var layers = try #require(instruments[i]["layers"] as? [[String: Any]])
            for l in layers.indices {
                let samples = try #require(layers[l]["samples"] as? [Any])
                layers[l]["samples"] = samples.map { s -> Any in
                    if let path = s as? String { return root.appendingPathComponent(path).path }
                    var object = s as! [String: Any]
                    object["path"] = root.appendingPathComponent(object["path"] as! String).path
                    return object
                }
            }
            instruments[i]["layers"] = layers
            if routed {
                switch instruments[i]["id"] as? String {
                case "kick": instruments[i]["output"] = "kick"
                case "snare", "clap": instruments[i]["output"] = "snares"
                default: break
                }
            }
        }
        kit["instruments"] = instruments
        let url = dir.appendingPathComponent(routed ? "routed.json" : "whole.json")
        try JSONSerialization.data(withJSONObject: kit, options: [.prettyPrinted, .sortedKeys]).write(to: url)
        return url
    }

    static func channels(_ path: String) throws -> [[Float]] {
        let sound = try SoundFileLoader().load(path: path)
        return [sound.samples(channel: 0), sound.samples(channel: 1)]
    }

    @Test func eachOutputsPortsEqualItsStemOnTheDeviceTimeline() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let patch = try Self.drums(routed: true, in: dir)
        let server = try JACKServer(period: 256)
        defer { server.stop() }
        let seconds = 8.0
        let witness = try CaptureProcess(server: server, ports: ["m0", "m1", "k0", "k1", "s0", "s1"],
                                         frames: Int(seconds * 48000), name: "wit", connect: false)
        let sampler = try BackgroundProgram(productsDirectory.appendingPathComponent("sampler"),
                                            ["play", "--patch", patch.path, "--server", server.name, "--name", "sbin",
                                             "--connect", "wit:in_0,wit:in_1",
                                             "--connect-output", "kick=wit:in_2,wit:in_3",
                                             "--connect-output", "snares=wit:in_4,wit:in_5",
                                             "--duration", "\(seconds + 30)"], timeout: seconds + 40)
        let recording = try witness.finish()
        sampler.terminate()
        let played = sampler.finish()
        #expect(played.status == 0, "\(played.output)")
        #expect(played.output.contains("outputs beside out_L/out_R: kick_L/kick_R, snares_L/snares_R"), "\(played.output)")
        let origin = try #require(played.output.range(of: #"from device frame \d+"#, options: .regularExpression)
            .flatMap { Int64(played.output[$0].split(separator: " ").last!) }, "\(played.output)")

        let main = dir.appendingPathComponent("main.wav").path, stems = dir.appendingPathComponent("stems").path
        let r = try runSampler(["render", "--patch", patch.path, "--out", main, "--stems", stems, "--duration", "\(seconds + 5)"], timeout: 120)
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout.contains("stems: \(stems)/kick.wav, \(stems)/snares.wav"), "\(r.stdout)")
        let render = try Self.channels(main) + Self.channels("\(stems)/kick.wav") + Self.channels("\(stems)/snares.wav")
        // Every stem sounds (the test would pass vacuously on silence otherwise).
        for c in stride(from: 0, to: 6, by: 2) { #expect(render[c].contains { abs($0) > 0.05 }, "channel \(c) is silent") }
        let check = TimelineCheck(capture: recording, render: render, origin: origin)
        print("six ports against the main mix and two stems: \(check)")
        #expect(check.verdicts.count * 256 > 48000 * 7)
        DeviceTimelineLiveTests.expectExact(LiveTimelineRun(check: check, output: played.output, origin: origin, disturbances: 0))

        // The stems and the main mix add up to the whole patch on the main mix.
        let whole = try Self.drums(routed: false, in: dir)
        let wholeWav = dir.appendingPathComponent("whole.wav").path
        let w = try runSampler(["render", "--patch", whole.path, "--out", wholeWav, "--duration", "\(seconds + 5)"], timeout: 120)
        #expect(w.status == 0, "\(w.stderr)")
        let sum = try Self.channels(wholeWav)
        var worst: Float = 0
        for c in 0..<2 {
            #expect(sum[c].count == render[c].count)
            for t in 0..<min(sum[c].count, render[c].count) {
                worst = max(worst, abs(render[c][t] + render[2 + c][t] + render[4 + c][t] - sum[c][t]))
            }
        }
        #expect(worst <= 1e-6, "stems + main differ from the whole render by up to \(worst)")
    }

    @Test func outputOptionsAndNamesAreCheckedWithClearErrors() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let whole = try Self.drums(routed: false, in: dir)
        let none = try runSampler(["render", "--patch", whole.path, "--out", dir.appendingPathComponent("x.wav").path,
                                   "--stems", dir.appendingPathComponent("s").path, "--duration", "1"])
        #expect(none.status != 0 && none.stderr.contains("names no outputs"), "\(none.stderr)")
        let bad = try runSampler(["play", "--patch", whole.path, "--connect-output", "kick", "--duration", "1"])
        #expect(bad.status != 0 && bad.stderr.contains("--connect-output expects NAME=PORT[,PORT]"), "\(bad.stderr)")
        let patch = dir.appendingPathComponent("bad.json")
        try String(contentsOf: whole, encoding: .utf8).replacingOccurrences(of: "\"id\" : \"kick\"", with: "\"id\" : \"kick\", \"output\": \"a b\"")
            .write(to: patch, atomically: true, encoding: .utf8)
        let name = try runSampler(["validate", patch.path])
        #expect(name.status != 0 && name.stderr.contains("instruments[0].output: an output name is 1 to 32 letters"), "\(name.stderr)")
    }
}
