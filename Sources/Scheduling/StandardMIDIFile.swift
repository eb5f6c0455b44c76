import SamplerCore

/// An error reading a MIDI file: one line naming the file and where (track, byte offset).
package struct MIDIFileError: Error, Equatable, Sendable, CustomStringConvertible {
    package var message: String
    package init(message: String) { self.message = message }
    package var description: String { message }
}

/// One note-on (velocity > 0), note-off (0x8n, or 0x9n with velocity 0) or other channel
/// message (a controller, pitch bend, pressure, program change), all tracks merged.
package struct MIDIFileEvent: Equatable, Sendable {
    package var tick: Int64
    package var channel: Int
    /// The note, or a channel message's first data byte.
    package var note: Int
    /// 1…127 for a note-on; the release velocity for a note-off; a channel message's second
    /// data byte (0 when it has one).
    package var velocity: Int
    package var isNoteOn: Bool
    package var track: Int
    /// The status's kind: 0x80 or 0x90 for notes, 0xA0…0xE0 for the other channel messages.
    package var kind: UInt8 = 0x90

    package var isNote: Bool { kind == 0x80 || kind == 0x90 }

    package init(tick: Int64, channel: Int, note: Int, velocity: Int, isNoteOn: Bool, track: Int, kind: UInt8? = nil) {
        self.tick = tick
        self.channel = channel
        self.note = note
        self.velocity = velocity
        self.isNoteOn = isNoteOn
        self.track = track
        self.kind = kind ?? (isNoteOn ? 0x90 : 0x80)
    }
}

/// A tempo change: from `tick` on, a quarter note lasts `microsecondsPerQuarter`.
package struct MIDITempoChange: Equatable, Sendable {
    package var tick: Int64
    package var microsecondsPerQuarter: Int
}

/// A Standard MIDI File (format 0 or 1): its notes, all tracks merged in tick order, and its
/// tempo map. Running status, sysex and meta events are read; only notes and tempo changes are
/// kept. Control thread only.
package struct MIDIFile: Equatable, Sendable {
    package var format: Int
    package var ticksPerQuarter: Int
    /// Sorted by tick; at one tick, in track order, then as written.
    package var events: [MIDIFileEvent]
    /// Sorted by tick, one per tick (the last written wins); 120 bpm before the first.
    package var tempoChanges: [MIDITempoChange]
    /// The last end-of-track (at least the last event's tick).
    package var endTick: Int64
    package var file: String
    /// Seconds at each tempo change (same indices as `tempoChanges`).
    private var secondsAtChange: [Double] = []

    package static let maxBytes = 16 << 20
    package static let maxEvents = 1_000_000
    package static let maxTracks = 1024
    /// The largest tick accepted (about 2^40: a million hours at 480 ticks a quarter and 120 bpm).
    static let maxTick: Int64 = 1 << 40

    /// Parses the bytes of a .mid file; `file` names it in errors.
    package init(bytes: [UInt8], file: String) throws(MIDIFileError) {
        self.file = file
        func fail(_ message: String) -> MIDIFileError { MIDIFileError(message: "\(file): \(message)") }
        func u32(_ i: Int) -> Int { Int(bytes[i]) << 24 | Int(bytes[i + 1]) << 16 | Int(bytes[i + 2]) << 8 | Int(bytes[i + 3]) }
        func u16(_ i: Int) -> Int { Int(bytes[i]) << 8 | Int(bytes[i + 1]) }
        guard bytes.count <= Self.maxBytes else { throw fail("the file is \(bytes.count >> 20) MB; a MIDI file is at most \(Self.maxBytes >> 20) MB") }
        guard bytes.count >= 14, bytes[0] == 0x4D, bytes[1] == 0x54, bytes[2] == 0x68, bytes[3] == 0x64 else {
            throw fail("not a Standard MIDI File (it does not start with MThd)")
        }
        let headerLength = u32(4)
        guard headerLength >= 6, headerLength <= bytes.count - 8 else { throw fail("the MThd header says \(headerLength) bytes") }
        format = u16(8)
        let declaredTracks = u16(10)
        let division = u16(12)
        guard format == 0 || format == 1 else {
            throw fail(format == 2 ? "format 2 (independent patterns) is not supported" : "unknown format \(format)")
        }
        guard division & 0x8000 == 0 else { throw fail("SMPTE time division is not supported (only ticks per quarter note)") }
        guard division > 0 else { throw fail("the division is 0 ticks per quarter note") }
        ticksPerQuarter = division

        var events: [MIDIFileEvent] = []
        var tempos: [(tick: Int64, track: Int, order: Int, value: Int)] = []
        var endTick: Int64 = 0
        var offset = 8 + headerLength
        var track = 0
        while offset + 8 <= bytes.count {
            let isTrack = bytes[offset] == 0x4D && bytes[offset + 1] == 0x54 && bytes[offset + 2] == 0x72 && bytes[offset + 3] == 0x6B
            let length = u32(offset + 4)
            let start = offset + 8
            guard length <= bytes.count - start else {
                throw fail("track \(track + 1) at byte \(offset): the chunk says \(length) bytes, \(bytes.count - start) remain")
            }
            offset = start + length
            guard isTrack else { continue }
            track += 1
            guard track <= Self.maxTracks else { throw fail("more than \(Self.maxTracks) tracks") }
            if format == 0 && track > 1 { throw fail("a format 0 file has one track, this one has more") }
            // One track.
            var i = start
            let end = start + length
            var tick: Int64 = 0
            var status: UInt8 = 0
            var order = 0
            func where_(_ at: Int) -> String { "track \(track) at byte \(at)" }
            func vlq() throws(MIDIFileError) -> Int64 {
                var value: Int64 = 0
                for n in 0..<4 {
                    guard i < end else { throw fail("\(where_(i)): the track ends inside a number") }
                    let b = bytes[i]
                    i += 1
                    value = value << 7 | Int64(b & 0x7F)
                    if b & 0x80 == 0 { return value }
                    if n == 3 { throw fail("\(where_(i - 4)): a variable-length number longer than 4 bytes") }
                }
                return value
            }
            trackLoop: while i < end {
                tick += try vlq()
                guard tick <= Self.maxTick else { throw fail("\(where_(i)): the track runs past \(Self.maxTick) ticks") }
                guard i < end else { throw fail("\(where_(i)): the track ends after a delta time") }
                let at = i
                var byte = bytes[i]
                if byte == 0xFF {
                    guard i + 1 < end else { throw fail("\(where_(at)): the track ends inside a meta event") }
                    let type = bytes[i + 1]
                    i += 2
                    let length = try vlq()
                    guard length <= Int64(end - i) else { throw fail("\(where_(at)): a meta event of \(length) bytes, \(end - i) remain in the track") }
                    let data = i
                    i += Int(length)
                    if type == 0x2F { break trackLoop }
                    if type == 0x51 {
                        guard length == 3 else { throw fail("\(where_(at)): a tempo event of \(length) bytes (expected 3)") }
                        let value = Int(bytes[data]) << 16 | Int(bytes[data + 1]) << 8 | Int(bytes[data + 2])
                        guard value > 0 else { throw fail("\(where_(at)): a tempo of 0 microseconds per quarter note") }
                        tempos.append((tick, track, order, value))
                        order += 1
                    }
                    continue
                }
                if byte == 0xF0 || byte == 0xF7 {
                    i += 1
                    let length = try vlq()
                    guard length <= Int64(end - i) else { throw fail("\(where_(at)): a sysex of \(length) bytes, \(end - i) remain in the track") }
                    i += Int(length)
                    continue
                }
                if byte > 0xF0 { throw fail("\(where_(at)): system message 0x\(String(byte, radix: 16, uppercase: true)) inside a track") }
                if byte & 0x80 != 0 {
                    status = byte
                    i += 1
                } else {
                    guard status != 0 else { throw fail("\(where_(at)): running status with no previous status byte") }
                    byte = status
                }
                let kind = status & 0xF0
                let dataCount = kind == 0xC0 || kind == 0xD0 ? 1 : 2
                guard i + dataCount <= end else { throw fail("\(where_(at)): the track ends inside a message") }
                for k in 0..<dataCount where bytes[i + k] >= 0x80 {
                    throw fail("\(where_(i + k)): a data byte of 0x\(String(bytes[i + k], radix: 16, uppercase: true)) (above 0x7F)")
                }
                if kind == 0x80 || kind == 0x90 {
                    let velocity = Int(bytes[i + 1])
                    guard events.count < Self.maxEvents else { throw fail("more than \(Self.maxEvents) notes and controllers") }
                    events.append(MIDIFileEvent(tick: tick, channel: Int(status & 0x0F), note: Int(bytes[i]), velocity: velocity,
                                                isNoteOn: kind == 0x90 && velocity > 0, track: track))
                } else {
                    guard events.count < Self.maxEvents else { throw fail("more than \(Self.maxEvents) notes and controllers") }
                    events.append(MIDIFileEvent(tick: tick, channel: Int(status & 0x0F), note: Int(bytes[i]),
                                                velocity: dataCount == 2 ? Int(bytes[i + 1]) : 0, isNoteOn: false, track: track, kind: kind))
                }
                i += dataCount
            }
            endTick = max(endTick, tick)
        }
        guard track > 0 else { throw fail("no track (MTrk chunk) in the file") }
        _ = declaredTracks
        // Merge: stable by tick (track order, then as written: the append order).
        self.events = events.enumerated().sorted { a, b in
            a.element.tick != b.element.tick ? a.element.tick < b.element.tick
                : a.element.track != b.element.track ? a.element.track < b.element.track : a.offset < b.offset
        }.map(\.element)
        self.endTick = max(endTick, self.events.last?.tick ?? 0)
        let sortedTempos = tempos.sorted { ($0.tick, $0.track, $0.order) < ($1.tick, $1.track, $1.order) }
        var changes: [MIDITempoChange] = []
        for t in sortedTempos {
            if changes.last?.tick == t.tick { changes[changes.count - 1].microsecondsPerQuarter = t.value } else {
                changes.append(MIDITempoChange(tick: t.tick, microsecondsPerQuarter: t.value))
            }
        }
        if changes.first?.tick != 0 { changes.insert(MIDITempoChange(tick: 0, microsecondsPerQuarter: 500_000), at: 0) }
        tempoChanges = changes
        var seconds: [Double] = [0]
        for k in 1..<max(1, changes.count) {
            seconds.append(seconds[k - 1] + Double(changes[k].tick - changes[k - 1].tick) * Double(changes[k - 1].microsecondsPerQuarter)
                / 1e6 / Double(ticksPerQuarter))
        }
        secondsAtChange = seconds
    }

    /// Seconds from tick 0 to `tick` under the tempo map: the time at the last change before it
    /// plus the ticks since at that tempo (absolute positions, no summed rounded intervals).
    package func seconds(atTick tick: Int64) -> Double {
        // The last change at or before `tick` (binary search; the first is at tick 0).
        var low = 0, high = tempoChanges.count - 1
        while low < high {
            let mid = (low + high + 1) / 2
            if tempoChanges[mid].tick <= tick { low = mid } else { high = mid - 1 }
        }
        let k = low
        return secondsAtChange[k] + Double(tick - tempoChanges[k].tick) * Double(tempoChanges[k].microsecondsPerQuarter)
            / 1e6 / Double(ticksPerQuarter)
    }

    package var duration: Double { seconds(atTick: endTick) }

    /// The tempo at tick 0, in quarter notes per minute.
    package var initialTempo: Double { 60_000_000 / Double(tempoChanges[0].microsecondsPerQuarter) }

    package static func == (a: MIDIFile, b: MIDIFile) -> Bool {
        a.format == b.format && a.ticksPerQuarter == b.ticksPerQuarter && a.events == b.events && a.tempoChanges == b.tempoChanges
            && a.endTick == b.endTick && a.file == b.file
    }
}
