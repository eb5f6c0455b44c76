import CJACK

/// Bar/beat/tick for every transport frame of a metronome's music, precomputed on the control
/// side so that the timebase callback (on JACK's real-time thread) only searches a table and does
/// arithmetic. Transport frame 0 is the first beat of the music.
///
/// Created on the control thread; `fill` is real-time safe.
///
/// `@unchecked Sendable` by contract: immutable after `init` (`beats` is filled there and never
/// written again; `end` and `tail` are constants), so the control thread and JACK's process thread
/// (the timebase callback) may read it concurrently.
package final class TimebaseTable: @unchecked Sendable {
    /// One beat of the music, in JACK's terms.
    package struct Beat: BitwiseCopyable, Sendable, Equatable {
        /// Transport frame of the beat (not rounded).
        package var start: Double
        /// Bar number from 1 and beat within the bar from 1.
        package var bar: Int32
        package var beat: Int32
        package var beatsPerBar: Float
        package var beatType: Float
        /// JACK's tempo: beats of `beatType` per minute.
        package var beatsPerMinute: Double
        /// Beats before this bar, in ticks.
        package var barStartTick: Double

        package init(start: Double, bar: Int32, beat: Int32, beatsPerBar: Float, beatType: Float, beatsPerMinute: Double, barStartTick: Double) {
            self.start = start
            self.bar = bar
            self.beat = beat
            self.beatsPerBar = beatsPerBar
            self.beatType = beatType
            self.beatsPerMinute = beatsPerMinute
            self.barStartTick = barStartTick
        }
    }

    /// An endless stretch at one tempo after the table's beats.
    package struct Tail: BitwiseCopyable, Sendable, Equatable {
        /// Transport frame of its first beat, and frames per beat.
        package var start: Double
        package var framesPerBeat: Double
        /// Bar number (from 1) of its first bar, and beats before it.
        package var firstBar: Int
        package var beatsBefore: Int
        package var beatsPerBar: Int
        package var beatType: Float
        package var beatsPerMinute: Double

        package init(start: Double, framesPerBeat: Double, firstBar: Int, beatsBefore: Int, beatsPerBar: Int,
                    beatType: Float, beatsPerMinute: Double) {
            self.start = start
            self.framesPerBeat = framesPerBeat
            self.firstBar = firstBar
            self.beatsBefore = beatsBefore
            self.beatsPerBar = beatsPerBar
            self.beatType = beatType
            self.beatsPerMinute = beatsPerMinute
        }
    }

    /// Ticks per beat reported to JACK (klick's and most sequencers' value).
    package static var ticksPerBeat: Double { 1920 }

    private let beats: UnsafeMutableBufferPointer<Beat>
    /// Where the beats end (the tail's start, or the end of the music).
    private let end: Double
    private let tail: Tail?

    /// - Parameters:
    ///   - beats: every beat of the finite part, in order.
    ///   - end: the transport frame where that part ends.
    ///   - tail: what follows for ever, if anything (otherwise no BBT is given after `end`).
    package init(beats: [Beat], end: Double, tail: Tail?) {
        self.beats = .allocate(capacity: beats.count)
        _ = self.beats.initialize(from: beats)
        self.end = end
        self.tail = tail
    }

    deinit { beats.deallocate() }

    /// Fills the BBT fields of `position` for its `frame` (or clears `valid` after the end of
    /// finite music). Real-time safe.
    @_noLocks @_noAllocation
    func fill(_ position: UnsafeMutablePointer<jack_position_t>) {
        let f = Double(position.pointee.frame)
        let tpb = 1920.0
        let count = beats.count, end = self.end
        // (No `&&` here: its autoclosure would capture `self`.)
        var inTable = count > 0
        if f >= end { inTable = false }
        var bar: Int32, beat: Int32, tick: Double, barStartTick: Double
        var beatsPerBar: Float, beatType: Float, bpm: Double
        if inTable {
            var lo = 0, hi = count - 1
            while lo < hi {
                let mid = (lo + hi + 1) / 2
                if beats[mid].start <= f { lo = mid } else { hi = mid - 1 }
            }
            let b = beats[lo]
            let next = lo + 1 < count ? beats[lo + 1].start : end
            let length = next - b.start
            bar = b.bar
            beat = b.beat
            tick = length > 0 ? max(0, f - b.start) / length * tpb : 0
            barStartTick = b.barStartTick
            beatsPerBar = b.beatsPerBar
            beatType = b.beatType
            bpm = b.beatsPerMinute
        } else if let t = tail, f >= t.start {
            let position = (f - t.start) / t.framesPerBeat
            // Int() truncates toward zero, which is down here: position >= 0.
            let n = Int(position)
            bar = Int32(truncatingIfNeeded: t.firstBar + n / t.beatsPerBar)
            beat = Int32(truncatingIfNeeded: n % t.beatsPerBar + 1)
            tick = (position - Double(n)) * tpb
            barStartTick = Double(t.beatsBefore + n - n % t.beatsPerBar) * tpb
            beatsPerBar = Float(t.beatsPerBar)
            beatType = t.beatType
            bpm = t.beatsPerMinute
        } else {
            position.pointee.valid = jack_position_bits_t(rawValue: 0)
            return
        }
        position.pointee.valid = jack_position_bits_t(rawValue: JackPositionBBT.rawValue | JackTickDouble.rawValue)
        position.pointee.bar = bar
        position.pointee.beat = beat
        position.pointee.tick = Int32(min(tick, tpb - 1))
        position.pointee.tick_double = tick
        position.pointee.bar_start_tick = barStartTick
        position.pointee.beats_per_bar = beatsPerBar
        position.pointee.beat_type = beatType
        position.pointee.ticks_per_beat = tpb
        position.pointee.beats_per_minute = bpm
    }

    /// The BBT fields for transport frame `frame` (for tests and the status line).
    package func position(at frame: UInt32) -> (bar: Int32, beat: Int32, tick: Double, beatsPerMinute: Double)? {
        var p = jack_position_t()
        p.frame = frame
        fill(&p)
        guard p.valid.rawValue != 0 else { return nil }
        return (p.bar, p.beat, p.tick_double, p.beats_per_minute)
    }
}
