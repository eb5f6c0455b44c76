import Foundation
import JACKTestSupport
import SoundFiles
import Testing

/// A format 1 Standard MIDI File: a tempo track (`tempos`: tick, µs per quarter) and one track
/// of `notes` (tick, note, velocity; each with a note-off 30 ticks later), `division` ticks per
/// quarter, ending `tail` ticks after the last event.
func standardMIDIFile(division: Int = 480, tempos: [(Int, Int)], notes: [(Int, Int, Int)], tail: Int = 480) -> Data {
    func vlq(_ n: Int) -> [UInt8] {
        var out: [UInt8] = [UInt8(n & 0x7F)]; var n = n >> 7
        while n > 0 { out.insert(UInt8(n & 0x7F) | 0x80, at: 0); n >>= 7 }
        return out
    }
    func be32(_ v: Int) -> [UInt8] { [UInt8(v >> 24 & 0xFF), UInt8(v >> 16 & 0xFF), UInt8(v >> 8 & 0xFF), UInt8(v & 0xFF)] }
    func track(_ events: [(Int, [UInt8])], tail: Int) -> [UInt8] {
        var body: [UInt8] = [], last = 0
        for (tick, bytes) in events.sorted(by: { $0.0 < $1.0 }) { body += vlq(tick - last) + bytes; last = tick }
        body += vlq(tail) + [0xFF, 0x2F, 0x00]
        return Array("MTrk".utf8) + be32(body.count) + body
    }
    let tempoTrack = track(tempos.map { ($0.0, [0xFF, 0x51, 0x03, UInt8($0.1 >> 16 & 0xFF), UInt8($0.1 >> 8 & 0xFF), UInt8($0.1 & 0xFF)]) }, tail: 0)
    let noteTrack = track(notes.flatMap { [($0.0, [0x99, UInt8($0.1), UInt8($0.2)]), ($0.0 + 30, [0x89, UInt8($0.1), 0])] }, tail: tail)
    return Data(Array("MThd".utf8) + be32(6) + [0, 1, 0, 2, UInt8(division >> 8), UInt8(division & 0xFF)] + tempoTrack + noteTrack)
}

/// A MIDI file's notes on their frames, live (captured by an independent client) and offline:
/// the frames come from the file's tempo map, not from the patch's tempo.
@Suite(.serialized) struct MIDIFileLiveTests {
    /// 100 bpm, then 137 bpm from tick 960, then 71 bpm from tick 1700; kicks (36, left) and
    /// snares (50, right) on ticks that fall between frames.
    static let tempos = [(0, 600_000), (960, 437_956), (1700, 845_070)]
    static let notes = [(0, 36, 100), (333, 50, 90), (480, 36, 127), (961, 50, 80), (1111, 36, 70), (1699, 50, 100),
                        (1700, 36, 100), (2001, 50, 60), (2400, 36, 110)]

    /// Seconds of `tick` under `tempos` (480 ticks a quarter).
    static func seconds(_ tick: Int) -> Double {
        var s = 0.0
        for (k, t) in tempos.enumerated() {
            let next = k + 1 < tempos.count ? tempos[k + 1].0 : Int.max
            guard tick > t.0 else { break }
            s += Double(min(tick, next) - t.0) * Double(t.1) / 1e6 / 480
        }
        return s
    }

    func expectedOffsets(note: Int) -> [Int64] {
        Self.notes.filter { $0.1 == note }.map { Int64((Self.seconds($0.0) * 48000).rounded()) }
    }

    @Test func aMIDIFilesNotesLandOnTheirFramesLiveAndOffline() throws {
        let kit = try clickKit(bpm: 120, swing: 0, kickSteps: Array(repeating: 0, count: 8))
        let mid = kit.deletingLastPathComponent().appendingPathComponent("groove.mid")
        try standardMIDIFile(tempos: Self.tempos, notes: Self.notes).write(to: mid)

        // Offline.
        let wav = kit.deletingLastPathComponent().appendingPathComponent("groove.wav").path
        let r = try runSampler(["render", "--patch", kit.path, "--midi", mid.path, "--duration", "4", "--out", wav], timeout: 30)
        #expect(r.status == 0, "\(r.stderr)")
        let rendered = try SoundFileLoader().load(path: wav)
        let offline = Capture(firstFrame: 0, sampleRate: 48000, channels: [rendered.samples(channel: 0), rendered.samples(channel: 1)])
        #expect(offline.onsets(channel: 0) == expectedOffsets(note: 36))
        #expect(offline.onsets(channel: 1) == expectedOffsets(note: 50))

        // Live, on a server that cannot skip the client.
        let server = try JACKServer(period: 256)
        defer { server.stop() }
        let capture = try CaptureProcess(server: server, ports: ["l", "r"], frames: 48000 * 4, name: "cap", connect: false)
        let result = try runSampler(["play", "--patch", kit.path, "--midi", mid.path, "--server", server.name, "--name", "sbin",
                                     "--connect", "cap:in_0,cap:in_1", "--duration", "4", "--quiet"], timeout: 30)
        #expect(result.status == 0, "\(result.stderr)")
        let origin = try #require(result.stdout.range(of: #"from device frame \d+"#, options: .regularExpression)
            .flatMap { Int64(result.stdout[$0].split(separator: " ").last!) })
        let recording = try capture.finish()
        #expect(recording.onsets(channel: 0) == expectedOffsets(note: 36).map { $0 + origin })
        #expect(recording.onsets(channel: 1) == expectedOffsets(note: 50).map { $0 + origin })
    }

    @Test func aLoopedFileStartsAgainAtItsEndAndTempoScalesIt() throws {
        let kit = try clickKit(bpm: 120, swing: 0, kickSteps: Array(repeating: 0, count: 8))
        let mid = kit.deletingLastPathComponent().appendingPathComponent("bar.mid")
        // One bar of 4/4 at 120 bpm (2 s, 1,920 ticks; the last note-off is at 990): kicks on beats 1 and 3.
        try standardMIDIFile(tempos: [(0, 500_000)], notes: [(0, 36, 100), (960, 36, 100)], tail: 930).write(to: mid)
        let wav = kit.deletingLastPathComponent().appendingPathComponent("loop.wav").path
        let r = try runSampler(["render", "--patch", kit.path, "--midi", mid.path, "--loop", "--tempo", "150", "--duration", "4", "--out", wav],
                               timeout: 30)
        #expect(r.status == 0, "\(r.stderr)")
        let rendered = try SoundFileLoader().load(path: wav)
        let onsets = Capture(firstFrame: 0, sampleRate: 48000, channels: [rendered.samples(channel: 0)]).onsets(channel: 0)
        // At 150 bpm the bar lasts 1.6 s: kicks at 0, 0.8, 1.6, 2.4, 3.2 s.
        #expect(onsets == [0, 38400, 76800, 115_200, 153_600])
    }

    /// A looped file shorter than 100 ms (here 32 ms with 2,000 notes) is refused in one
    /// line at once: looped, each period would walk its passes.
    @Test func aLoopedFileTooShortToLoopIsOneLine() throws {
        let kit = try clickKit(bpm: 120, swing: 0, kickSteps: Array(repeating: 0, count: 8))
        let mid = kit.deletingLastPathComponent().appendingPathComponent("tick.mid")
        try standardMIDIFile(tempos: [(0, 500_000)], notes: (0..<2000).map { _ in (0, 36, 100) }, tail: 1).write(to: mid)
        let out = kit.deletingLastPathComponent().appendingPathComponent("o.wav").path
        let started = Date()
        let r = try runSampler(["render", "--patch", kit.path, "--midi", mid.path, "--loop", "--duration", "60", "--out", out], timeout: 30)
        #expect(r.status == 1)
        #expect(r.stderr.hasPrefix("sampler: error: \(mid.path): --loop: the file lasts ") && r.stderr.hasSuffix("a looped file lasts at least 100 ms\n"),
                "\(r.stderr)")
        #expect(Date().timeIntervalSince(started) < 5)
        // Once, it plays.
        let once = try runSampler(["render", "--patch", kit.path, "--midi", mid.path, "--duration", "1", "--out", out], timeout: 30)
        #expect(once.status == 0, "\(once.stderr)")
    }

    @Test func badMIDIFilesAndOptionsSayWhatIsWrong() throws {
        let kit = try clickKit(bpm: 120, swing: 0, kickSteps: Array(repeating: 0, count: 8))
        let dir = kit.deletingLastPathComponent()
        let bad = dir.appendingPathComponent("bad.mid")
        try Data("MThd this is not".utf8).write(to: bad)
        let out = dir.appendingPathComponent("o.wav").path
        let r = try runSampler(["render", "--patch", kit.path, "--midi", bad.path, "--duration", "1", "--out", out])
        #expect(r.status == 1)
        #expect(r.stderr.hasPrefix("sampler: error: \(bad.path): ") && r.stderr.split(separator: "\n").count == 1, "\(r.stderr)")
        let both = try runSampler(["render", "--patch", kit.path, "--midi", bad.path, "--song", "--duration", "1", "--out", out])
        #expect(both.status == 64 && both.stderr.contains("--midi plays the MIDI file: it cannot be used with --pattern or --song"))
        let mid = dir.appendingPathComponent("g.mid")
        try standardMIDIFile(tempos: [(0, 500_000)], notes: [(0, 36, 100), (0, 77, 100)]).write(to: mid)
        let unplayed = try runSampler(["render", "--patch", kit.path, "--midi", mid.path, "--duration", "1", "--out", out])
        #expect(unplayed.status == 0 && unplayed.stderr.contains("no instrument of \(kit.path) plays MIDI note 77"), "\(unplayed.stderr)")
    }
}
