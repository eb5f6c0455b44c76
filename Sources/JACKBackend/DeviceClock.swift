/// The 64-bit device clock: JACK's 32-bit frame time of each period, widened.
///
/// Each period is stamped with what JACK says about that cycle (`jack_last_frame_time`), never
/// with a count of the client's own: the engine renders the frames of that stamp, advancing its
/// voices over frames JACK skipped and writing silence for frames it already rendered (see
/// `Engine.render`). What JACK2 and PipeWire's JACK return, and the ambiguity left:
///
/// - `jack_last_frame_time` is the frame time of the cycle the server is in when it is read.
///   A callback that runs on time reads its own cycle's frame. One that runs so late that the
///   server has begun the next cycle (async mode, a slow client upstream) reads the next cycle's
///   frame, and the server, finding the graph unfinished, does not start that cycle's graph: the
///   period's output and every client downstream (a recorder, the witness) carry the same stamp,
///   and the cycle before is the lost one. Rarely the next cycle's graph does run and reads the
///   same frame again: the engine then writes silence for frames it already rendered. So the
///   ambiguity is at most the period of an xrun, and it shows as silence, never as a shift.
/// - `jack_get_cycle_times` reads the same frame timer (its `current_frames` equals
///   `jack_last_frame_time`) and adds host times; `jack_frames_since_cycle_start` tells how late
///   the callback is in its cycle but not for which cycle it was woken. Neither removes the
///   ambiguity above, so neither is used for stamping.
/// - A buffer-size change keeps the frame timer counting; the first period of the new size is
///   stamped where JACK says it is, whatever the old size predicted.
/// - Freewheeling: JACK2 keeps advancing the frame timer by one period per cycle, so the engine
///   follows it (renders as fast as it is asked, contiguously); a jump at its end is a skip.
/// - The 32-bit timer wraps every ~24.8 h at 48 kHz: each raw value is widened to the 64-bit
///   frame nearest the previous stamp (any jump under 2^31 frames is seen as it is).
/// - A new server (reconnect) starts a new clock: the session resets the engine first, and a
///   new client's clock widens its first value as it is.
///
/// Process thread only.
struct DeviceClock {
    private(set) var periodStart: Int64 = 0
    private var started = false

    /// The 64-bit device frame of the period JACK reports as starting at `raw`.
    mutating func stamp(raw: UInt32) -> Int64 {
        guard started else {
            started = true
            periodStart = Int64(raw)
            return periodStart
        }
        periodStart += Int64(Int32(bitPattern: raw &- UInt32(truncatingIfNeeded: periodStart)))
        return periodStart
    }
}
