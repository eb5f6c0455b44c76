import Testing
@testable import Scheduling

/// Builds Standard MIDI Files in code.
struct SMFWriter {
    static func vlq(_ n: Int) -> [UInt8] {
        var out: [UInt8] = [UInt8(n & 0x7F)]
        var n = n >> 7
        while n > 0 { out.insert(UInt8(n & 0x7F) | 0x80, at: 0); n >>= 7 }
        return out
    }
    static func chunk(_ id: String, _ body: [UInt8]) -> [UInt8] {
        Array(id.utf8) + [UInt8(body.count >> 24 & 0xFF), UInt8(body.count >> 16 & 0xFF), UInt8(body.count >> 8 & 0xFF), UInt8(body.count & 0xFF)] + body
    }
    /// A track from (delta, bytes) pairs, with an end of track.
    static func track(_ events: [(Int, [UInt8])], endDelta: Int = 0) -> [UInt8] {
        chunk("MTrk", events.flatMap { vlq($0.0) + $0.1 } + vlq(endDelta) + [0xFF, 0x2F, 0x00])
    }
    static func file(format: Int = 1, division: Int = 480, tracks: [[UInt8]]) -> [UInt8] {
        chunk("MThd", [0, UInt8(format), 0, UInt8(tracks.count), UInt8(division >> 8), UInt8(division & 0xFF)]) + tracks.flatMap { $0 }
    }
    static func tempo(_ us: Int) -> [UInt8] { [0xFF, 0x51, 0x03, UInt8(us >> 16 & 0xFF), UInt8(us >> 8 & 0xFF), UInt8(us & 0xFF)] }
}

@Suite struct StandardMIDIFileTests {
    @Test func formatZeroWithRunningStatusAndNoteOffsAsZeroVelocity() throws {
        let bytes = SMFWriter.file(format: 0, tracks: [SMFWriter.track([
            (0, [0x99, 36, 100]), (0, [38, 90]),        // running status
            (240, [36, 0]), (0, [0x89, 38, 64]),        // note-on velocity 0 is a note-off
            (240, [0xF0, 0x02, 0x7E, 0xF7]),            // sysex, skipped
            (0, [0xC9, 5]),                             // program change: one data byte
            (0, [0x99, 42, 70]),
        ], endDelta: 480)])
        let f = try MIDIFile(bytes: bytes, file: "g.mid")
        let notes = f.events.filter(\.isNote)
        #expect(notes.map(\.note) == [36, 38, 36, 38, 42])
        #expect(notes.map(\.isNoteOn) == [true, true, false, false, true])
        #expect(notes.map(\.tick) == [0, 0, 240, 240, 480])
        // The program change is kept as a channel message (its one data byte).
        #expect(f.events.filter { !$0.isNote }.map { [Int($0.kind), $0.note, $0.channel] } == [[0xC0, 5, 9]])
        #expect(f.events[0].channel == 9 && f.events[1].velocity == 90)
        #expect(f.endTick == 960)
        #expect(f.initialTempo == 120)
        #expect(f.duration == 1.0)
    }

    @Test func formatOneTracksMergeInTickThenTrackOrderUnderTheTempoMap() throws {
        let bytes = SMFWriter.file(tracks: [
            SMFWriter.track([(0, SMFWriter.tempo(500_000)), (480, SMFWriter.tempo(1_000_000))]),
            SMFWriter.track([(0, [0x90, 40, 1]), (960, [0x90, 41, 2])]),
            SMFWriter.track([(0, [0x90, 50, 3]), (480, [0x90, 51, 4])]),
        ])
        let f = try MIDIFile(bytes: bytes, file: "g.mid")
        #expect(f.events.map(\.note) == [40, 50, 51, 41])
        #expect(f.events.map(\.track) == [2, 3, 3, 2])
        #expect(f.tempoChanges == [MIDITempoChange(tick: 0, microsecondsPerQuarter: 500_000), MIDITempoChange(tick: 480, microsecondsPerQuarter: 1_000_000)])
        // 120 bpm for a quarter (0.5 s), then 60 bpm.
        #expect(f.seconds(atTick: 480) == 0.5)
        #expect(f.seconds(atTick: 960) == 1.5)
        #expect(f.seconds(atTick: 240) == 0.25)
        #expect(f.duration == 1.5)
    }

    @Test func unknownChunksAreSkipped() throws {
        let bytes = SMFWriter.file(format: 0, tracks: [SMFWriter.chunk("XFIH", [1, 2, 3]), SMFWriter.track([(0, [0x90, 36, 100])])])
        #expect(try MIDIFile(bytes: bytes, file: "g.mid").events.count == 1)
    }

    @Test func badFilesAreOneLineErrorsNamingTheFileAndPlace() {
        func error(_ bytes: [UInt8]) -> String {
            do { _ = try MIDIFile(bytes: bytes, file: "g.mid"); return "no error" } catch { return error.message }
        }
        #expect(error(Array("RIFF....".utf8)) == "g.mid: not a Standard MIDI File (it does not start with MThd)")
        #expect(error(SMFWriter.file(format: 2, tracks: [SMFWriter.track([])])) == "g.mid: format 2 (independent patterns) is not supported")
        #expect(error(SMFWriter.file(division: 0xE728, tracks: [SMFWriter.track([])])).contains("SMPTE"))
        var truncated = SMFWriter.file(tracks: [SMFWriter.track([(0, [0x90, 36, 100])])])
        truncated.removeLast(3)
        #expect(error(truncated) == "g.mid: track 1 at byte 14: the chunk says 8 bytes, 5 remain")
        #expect(error(SMFWriter.file(tracks: [SMFWriter.track([(0, [36, 100])])])) == "g.mid: track 1 at byte 23: running status with no previous status byte")
        #expect(error(SMFWriter.file(tracks: [SMFWriter.chunk("MTrk", [0xFF, 0xFF, 0xFF, 0xFF, 0x7F])])).contains("longer than 4 bytes"))
        #expect(error(SMFWriter.file(tracks: [SMFWriter.track([(0, [0x90, 0x80, 1])])])).contains("a data byte of 0x80"))
        #expect(error(SMFWriter.file(tracks: [SMFWriter.track([(0, [0xFF, 0x51, 0x03, 0, 0, 0])])])).contains("a tempo of 0"))
        #expect(error(SMFWriter.file(format: 0, tracks: [SMFWriter.track([]), SMFWriter.track([])])).contains("format 0 file has one track"))
    }

    @Test func theSourcePlacesNotesOnFramesFromAbsolutePositionsAndLoops() throws {
        let bytes = SMFWriter.file(tracks: [
            SMFWriter.track([(0, SMFWriter.tempo(500_000)), (480, SMFWriter.tempo(400_000))]),
            SMFWriter.track([(0, [0x99, 36, 127]), (0, [0x99, 99, 1]), (160, [0x99, 38, 64]), (800, [0x99, 36, 100])], endDelta: 960),
        ])
        let f = try MIDIFile(bytes: bytes, file: "g.mid")
        var s = MIDIFileSource(file: f, instruments: { $0 == 36 ? [0, 2] : $0 == 38 ? [1] : [] }, sampleRate: 44100, origin: 1000, loops: true)
        var got: [Trigger] = []
        s.produce(before: 1000 + 2 * 80_000) { got.append($0) }
        // Tick 160 at 120 bpm: 1/6 s = 7350 frames; tick 960 = 0.5 s + 480 ticks at 150 bpm (0.4 s).
        // The file lasts until tick 1920: 0.5 + 1440 ticks at 0.4/480 s = 1.7 s.
        let length = 1.7
        func frame(_ seconds: Double) -> Int64 { 1000 + Int64((seconds * 44100).rounded()) }
        #expect(got.prefix(4).map(\.frame) == [frame(0), frame(0), frame(1.0 / 6), frame(0.9)])
        #expect(got.prefix(4).map(\.player) == [0, 2, 1, 0])
        #expect(got[2].velocity == Float(64) / 127)
        // Pass 0 has five triggers (note 36 plays two instruments, twice); pass 1 starts at the file's length.
        #expect(got.map(\.frame)[5...9] == [frame(length), frame(length), frame(length + 1.0 / 6), frame(length + 0.9), frame(length + 0.9)])
        #expect(s.endFrame == nil)
        let once = MIDIFileSource(file: f, instruments: { _ in [0] }, sampleRate: 48000, origin: 0, speed: 2)
        #expect(once.endFrame == Int64((1.7 / 2 * 48000).rounded()))
    }

    @Test func aFileShorterThanAFrameDoesNotLoopAndAnExtremeSlowDownNeverTraps() throws {
        // 1 µs per quarter at 32,767 ticks a quarter: the file lasts a few picoseconds.
        let tiny = SMFWriter.file(division: 32767, tracks: [SMFWriter.track([(0, SMFWriter.tempo(1)), (0, [0x99, 36, 100])], endDelta: 1)])
        var s = MIDIFileSource(file: try MIDIFile(bytes: tiny, file: "t.mid"), instruments: { [$0] }, sampleRate: 48000, origin: 0, loops: true)
        var n = 0
        s.produce(before: 48000) { _ in n += 1 }
        #expect(n == 1 && s.endFrame != nil)
        // 60,000,000 bpm, then the slowest tempo, a note a million ticks on, played 10^8 times slower.
        let far = SMFWriter.file(division: 1, tracks: [SMFWriter.track([(0, SMFWriter.tempo(1)), (1, SMFWriter.tempo(0xFFFFFF)),
                                                                        (999_999, [0x99, 36, 100])])])
        var slow = MIDIFileSource(file: try MIDIFile(bytes: far, file: "f.mid"), instruments: { [$0] }, sampleRate: 384_000, origin: 0,
                                  speed: 1e-8)
        n = 0
        slow.produce(before: .max) { _ in n += 1 }
        #expect(n == 0 && slow.endFrame == .max)
    }
}
