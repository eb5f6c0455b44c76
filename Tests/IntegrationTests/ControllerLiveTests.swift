import Foundation
import JACKTestSupport
import SoundFiles
import Testing

/// MIDI controllers live: an independent JACK client (`sampler-midi-send`) sends notes, a CC4
/// sweep over a hi-hat's conditions, a controller steering a held tone, pitch bend and the
/// sustain pedal into `midi_in`; the witness (`sampler-capture`) records the output; every
/// captured period equals `sampler render` of the same messages at one period after their
/// frames (a MIDI file with one tick per frame).
@Suite(.serialized) struct ControllerLiveTests {
    /// A kit of decaying tones: a hat on note 42 whose CC4 picks one of two samples, and a held
    /// tone on note 60 with an envelope, a level on CC1, a pan on CC2 and a bend range.
    func controllerKit() throws -> URL {
        let dir = try temporaryDirectory()
        func tone(_ f: Double, seconds: Double, decay: Double) -> [Float] {
            (0..<Int(seconds * 48000)).map { i in Float(0.5 * sin(2 * .pi * f * Double(i) / 48000) * exp(-decay * Double(i) / 48000)) }
        }
        try WAVFileWriter.write(path: dir.appendingPathComponent("closed.wav").path, channels: [tone(3000, seconds: 0.2, decay: 30)], sampleRate: 48000)
        try WAVFileWriter.write(path: dir.appendingPathComponent("open.wav").path, channels: [tone(2200, seconds: 0.6, decay: 4)], sampleRate: 48000)
        try WAVFileWriter.write(path: dir.appendingPathComponent("pad.wav").path, channels: [tone(440, seconds: 2, decay: 0.5)], sampleRate: 48000)
        let kit = dir.appendingPathComponent("kit.json")
        try """
        {"version": 2, "tempo": 120, "controllers": {"1": 100},
         "instruments": [
          {"id": "closed", "midiNote": 42, "shareNote": true, "voices": 4, "layers": [{"samples": ["closed.wav"]}],
           "conditions": {"controllers": {"4": [64, 127]}}, "group": 1, "offBy": 2},
          {"id": "open", "midiNote": 42, "shareNote": true, "voices": 4, "layers": [{"samples": ["open.wav"]}],
           "conditions": {"controllers": {"4": [0, 63]}}, "group": 2, "offBy": 1},
          {"id": "pad", "midiNote": 60, "voices": 4, "layers": [{"samples": ["pad.wav"]}], "pan": -0.5,
           "envelope": {"attack": 0.01, "release": 0.05},
           "modulations": [{"controller": 1, "target": "amplitude", "depth": 1, "curve": 4},
                           {"controller": 2, "target": "pan", "depth": 1}],
           "bend": [200, -200]}],
         "patterns": [{"name": "silent", "beatsPerBar": 1, "tracks": {"pad": [0, 0, 0, 0]}}]}
        """.write(to: kit, atomically: true, encoding: .utf8)
        return kit
    }

    /// A Standard MIDI File of `events` (frame, bytes) at one tick per frame at 48 kHz: 480
    /// ticks a quarter note of 10 ms.
    static func midiFile(_ events: [(frame: Int64, bytes: [UInt8])]) -> Data {
        func vlq(_ n: Int) -> [UInt8] {
            var out: [UInt8] = [UInt8(n & 0x7F)]; var n = n >> 7
            while n > 0 { out.insert(UInt8(n & 0x7F) | 0x80, at: 0); n >>= 7 }
            return out
        }
        var track: [UInt8] = [0x00, 0xFF, 0x51, 0x03, 0x00, 0x27, 0x10]  // 10,000 µs a quarter
        var last: Int64 = 0
        for e in events.sorted(by: { $0.frame < $1.frame }) {
            track += vlq(Int(e.frame - last)) + e.bytes
            last = e.frame
        }
        track += vlq(480) + [0xFF, 0x2F, 0x00]
        func be32(_ v: Int) -> [UInt8] { [UInt8(v >> 24 & 0xFF), UInt8(v >> 16 & 0xFF), UInt8(v >> 8 & 0xFF), UInt8(v & 0xFF)] }
        return Data(Array("MThd".utf8) + be32(6) + [0, 0, 0, 1, 0x01, 0xE0] + Array("MTrk".utf8) + be32(track.count) + track)
    }

    /// The messages: the hat closed and open by CC4 (the open one choking the closed), the pad
    /// held by the sustain pedal through its note-off while CC1, CC2 and the bend move it, then
    /// released by the pedal; a hat between them all.
    static let messages = [
        "B9:04:7F", "99:2A:64", "B9:04:10", "99:2A:50", "99:2A:7F", "B0:40:7F", "90:3C:64", "80:3C:00",
        "B0:01:30", "B0:02:7F", "E0:00:60", "B9:04:50", "99:2A:64", "B0:01:7F", "E0:00:20", "B0:40:00", "99:2A:64", "C9:05",
    ]

    /// Sends `messages` ("B9:04:7F") to `sbin:midi_in` from an independent client, `gap`
    /// periods apart, each at an offset inside its period (first, last and between); returns
    /// each with the frame it was sent on.
    static func send(_ messages: [String], on server: JACKServer, gap: Int) throws -> [(frame: Int64, bytes: [UInt8])] {
        let offsets = messages.indices.map { String([0, 255, 17, 100, 200, 3][$0 % 6] % server.period) }
        let sender = try BackgroundProgram(productsDirectory.appendingPathComponent("sampler-midi-send"),
                                           ["--server", server.name, "--to", "sbin:midi_in", "--offsets", offsets.joined(separator: ","),
                                            "--messages", messages.joined(separator: ","), "--gap", "\(gap)"], timeout: 30,
                                           environment: server.environment)
        let sent = sender.finish()
        #expect(sent.status == 0, "\(sent.output)")
        // "sent B9:04:7F at FRAME"
        let events = sent.output.split(separator: "\n").filter { $0.hasPrefix("sent ") }.map { line in
            let words = line.split(separator: " ")
            return (frame: Int64(words[3])!, bytes: words[1].split(separator: ":").map { UInt8($0, radix: 16)! })
        }
        try #require(events.count == messages.count)
        return events
    }

    func play(on server: JACKServer) throws {
        let period = Int64(server.period)
        let kit = try controllerKit()
        let capture = try CaptureProcess(server: server, ports: ["l", "r"], frames: 48000 * 4, name: "cap", connect: false)
        let sampler = try BackgroundProgram(productsDirectory.appendingPathComponent("sampler"),
                                            ["play", "--patch", kit.path, "--server", server.name, "--name", "sbin",
                                             "--connect", "cap:in_0,cap:in_1", "--duration", "5", "--quiet"], timeout: 30,
                                            environment: server.environment)
        // The sampler runs (its outputs connected: its client is active) before the first message
        // is sent: a message sent before its first period is lost, not late.
        #expect(server.waitUntilConnected("sbin:out_L", to: "cap:in_0"), "the sampler did not connect its outputs")
        let events = try Self.send(Self.messages, on: server, gap: 6)
        let recording = try capture.finish()
        let played = sampler.finish()
        #expect(played.status == 0, "\(played.output)")
        // A program change selects nothing, and says so once.
        #expect(played.output.contains("sampler: warning: 1 MIDI program change ignored (a kit is one program)"), "\(played.output)")
        // The render's frame 0 is device frame `origin`; each message plays one period after its frame.
        let lead: Int64 = 1000
        let origin = events[0].frame + period - lead
        let dir = try temporaryDirectory()
        let mid = dir.appendingPathComponent("sent.mid")
        try Self.midiFile(events.map { (frame: $0.frame + period - origin, bytes: $0.bytes) }).write(to: mid)
        let wav = dir.appendingPathComponent("render.wav").path
        let r = try runSampler(["render", "--patch", kit.path, "--midi", mid.path, "--duration", "4", "--out", wav], timeout: 60)
        #expect(r.status == 0, "\(r.stderr)")
        let rendered = try SoundFileLoader().load(path: wav)
        let check = TimelineCheck(capture: recording, render: [rendered.samples(channel: 0), rendered.samples(channel: 1)], origin: origin)
        #expect(check.count(.wrong) == 0, "\(check)")
        // Something played: the periods with sound are many, and each is exact.
        #expect(check.count(.exact) > 100, "\(check)")
        #expect(rendered.samples(channel: 0).contains { abs($0) > 0.05 })
    }

    @Test func controllersPedalsAndBendsPlayLiveAsTheyRenderOnJACK2() throws {
        let server = try JACKServer(period: 256)
        defer { server.stop() }
        try play(on: server)
    }

    @Test func controllersPedalsAndBendsPlayLiveAsTheyRenderOnPipeWire() throws {
        let server = try JACKServer(pipewireQuantum: 256)
        defer { server.stop() }
        try play(on: server)
    }
}
