import Foundation
import JACKTestSupport
import SoundFiles
import Testing

/// Sounds streamed per voice, live (issue 51): a kit whose tones keep only their heads in
/// memory (`--stream-tails-above 0`) plays MIDI chords, a bend and note-offs from an independent
/// JACK client; the witness records the output, and every captured period equals `sampler
/// render` of the same messages, streamed the same way, one period after their frames: the
/// tails were read from disk in time and joined their heads on their frames. Each voice reads
/// its tail through a ring of 16,384 frames, a quarter of the tail, which the filler writes over
/// as the voice plays.
@Suite(.serialized) struct StreamedTailsLiveTests {
    /// Eight decaying stereo tones of 1.5 s on notes 60 to 67 (half at 44.1 kHz), with a release
    /// and a bend range; two of them (notes 65 and 66, never released here) loop forever.
    func toneKit() throws -> URL {
        let dir = try temporaryDirectory()
        var instruments: [String] = []
        for k in 0..<8 {
            let f = 220 * Double.pow(2, Double(k) / 12)
            // Every other one at 44.1 kHz: its head converted at load, its tails as they are read.
            let rate = k % 2 == 0 ? 48_000 : 44_100
            func tone(_ i: Int, _ g: Double, _ decay: Double) -> Float {
                let t = Double(i) / Double(rate)
                return Float(0.3 * sin(2 * Double.pi * g * t) * exp(-decay * t))
            }
            let left = (0..<rate * 3 / 2).map { tone($0, f, 1.5) }
            let right = (0..<rate * 3 / 2).map { tone($0, f * 1.5, 2) }
            try WAVFileWriter.write(path: dir.appendingPathComponent("t\(k).wav").path, channels: [left, right], sampleRate: rate)
            // Two loop forever (their loops repeated into the rings): one loop longer than half
            // a ring (repeated from a copy kept), one shorter (from the ring), at 44.1 kHz.
            let loop: String? = k == 6 ? "[24000, 59999]" : k == 5 ? "[30000, 35999]" : nil
            let samples = loop.map { #"{"path": "t\#(k).wav", "loop": \#($0)}"# } ?? #""t\#(k).wav""#
            instruments.append("""
              {"id": "t\(k)", "midiNote": \(60 + k), "voices": 2, "layers": [{"samples": [\(samples)]}],
               "envelope": {"release": 0.05}, "bend": [1200, -1200]\(loop == nil ? "" : #", "loops": -1"#)}
            """)
        }
        let kit = dir.appendingPathComponent("kit.json")
        try """
        {"version": 2, "tempo": 120, "instruments": [\(instruments.joined(separator: ",\n"))],
         "patterns": [{"name": "silent", "beatsPerBar": 1, "tracks": {"t0": [0, 0, 0, 0]}}]}
        """.write(to: kit, atomically: true, encoding: .utf8)
        return kit
    }

    static let messages = [
        "90:3C:64", "90:40:50", "90:43:7F", "E0:00:50", "80:3C:00", "90:3E:64", "E0:00:40", "80:40:00",
        "90:41:70", "90:3C:30", "80:43:00", "E0:00:30", "90:42:64", "80:3E:00",
    ]

    func play(on server: JACKServer) throws {
        let period = Int64(server.period)
        let kit = try toneKit()
        let capture = try CaptureProcess(server: server, ports: ["l", "r"], frames: 48000 * 4, name: "cap", connect: false)
        let sampler = try BackgroundProgram(productsDirectory.appendingPathComponent("sampler"),
                                            ["play", "--patch", kit.path, "--server", server.name, "--name", "sbin",
                                             "--connect", "cap:in_0,cap:in_1", "--duration", "5", "--quiet",
                                             "--stream-tails-above", "0", "--stream-ring-frames", "16384"], timeout: 30, environment: server.environment)
        #expect(server.waitUntilConnected("sbin:out_L", to: "cap:in_0"), "the sampler did not connect its outputs")
        let events = try ControllerLiveTests.send(Self.messages, on: server, gap: 12)
        let recording = try capture.finish()
        let played = sampler.finish()
        #expect(played.status == 0, "\(played.output)")
        #expect(!played.output.contains("tail not read") && !played.output.contains("not played"), "\(played.output)")
        try expectRendered(kit, played: events, period: period, as: recording)
    }

    /// Every period of `recording` equals `sampler render` of `kit` (tails streamed) playing
    /// `events` one period after their frames, or is silent before it.
    func expectRendered(_ kit: URL, played events: [(frame: Int64, bytes: [UInt8])], period: Int64, as recording: Capture) throws {
        let lead: Int64 = 1000
        let origin = events[0].frame + period - lead
        let dir = try temporaryDirectory()
        let mid = dir.appendingPathComponent("sent.mid")
        try ControllerLiveTests.midiFile(events.map { (frame: $0.frame + period - origin, bytes: $0.bytes) }).write(to: mid)
        let wav = dir.appendingPathComponent("render.wav").path
        let r = try runSampler(["render", "--patch", kit.path, "--midi", mid.path, "--duration", "4", "--out", wav,
                                "--stream-tails-above", "0"], timeout: 60)
        #expect(r.status == 0 && !r.stderr.contains("warning"), "\(r.stderr)")
        let rendered = try SoundFileLoader().load(path: wav)
        let check = TimelineCheck(capture: recording, render: [rendered.samples(channel: 0), rendered.samples(channel: 1)], origin: origin)
        #expect(check.count(.wrong) == 0, "\(check)")
        // Past the heads (8,192 frames): most of what sounds comes from the tails.
        #expect(check.count(.exact) > 300, "\(check)")
    }

    /// The tone kit loaded over OSC (`/sampler/load`) in place of a kit of one short click that
    /// streams nothing: it streams its tails as the program's kit would (the player started
    /// ready for loads), and plays the same MIDI as `sampler render` of the kit does.
    @Test func aKitLoadedOverOSCStreamsLiveAsItRenders() throws {
        let server = try JACKServer(period: 256)
        defer { server.stop() }
        let period = Int64(server.period)
        let kit = try toneKit()
        let dir = kit.deletingLastPathComponent()
        try WAVFileWriter.write(path: dir.appendingPathComponent("click.wav").path, channels: [[Float](repeating: 0.5, count: 480)],
                                sampleRate: 48000)
        let small = dir.appendingPathComponent("small.json")
        try #"{"version": 2, "tempo": 120, "instruments": [{"id": "c", "layers": [{"samples": ["click.wav"]}]}]}"#
            .write(to: small, atomically: true, encoding: .utf8)
        let capture = try CaptureProcess(server: server, ports: ["l", "r"], frames: 48000 * 4, name: "cap", connect: false)
        let (process, out, osc) = try OSCLiveTests().startWithOSC(
            ["play", "--patch", small.path, "--server", server.name, "--name", "sbin", "--connect", "cap:in_0,cap:in_1",
             "--duration", "8", "--osc-port", "0", "--stream-tails-above", "0"], environment: server.environment)
        defer { if process.isRunning { process.terminate() } }
        #expect(server.waitUntilConnected("sbin:out_L", to: "cap:in_0"), "the sampler did not connect its outputs")
        let sender = try BackgroundProgram(productsDirectory.appendingPathComponent("sampler-osc-send"),
                                           ["--port", osc, "--replies", "1", "/sampler/load", kit.path], timeout: 15)
        let loaded = sender.finish()
        #expect(loaded.output.contains("reply /sampler/loaded ,si \(kit.path) 8"), "\(loaded.output)")
        let events = try ControllerLiveTests.send(Self.messages, on: server, gap: 12)
        let recording = try capture.finish()
        process.waitUntilExit()
        let output = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        #expect(process.terminationStatus == 0, "\(output)")
        #expect(output.contains("its samples' heads in memory and their tails streamed"), "\(output)")
        #expect(!output.contains("tail not read") && !output.contains("not played"), "\(output)")
        try expectRendered(kit, played: events, period: period, as: recording)
    }

    @Test func aStreamedKitPlaysLiveAsItRendersOnJACK2() throws {
        let server = try JACKServer(period: 256)
        defer { server.stop() }
        try play(on: server)
    }
}
