/// The 64-bit device clock, advanced once per JACK period.
///
/// JACK's frame timer (`jack_last_frame_time`) is 32 bits wide and, read from a process
/// callback that runs late (the machine is busy), can already show a later cycle's time. So the
/// clock counts the frames it has processed itself, starting from JACK's value, and takes JACK's
/// value only when the two disagree for several periods in a row (cycles really were skipped).
/// A single late read therefore never moves a period's stamp, and the 32-bit wrap (every ~24.8 h
/// at 48 kHz) never shows. Process thread only.
struct DeviceClock {
    /// Periods of persistent disagreement after which JACK's time is taken.
    static let resyncAfter = 3

    private(set) var periodStart: Int64 = 0
    private var lastFrames: Int64 = 0
    private var started = false
    private var disagreements = 0

    /// The device frame of the first sample of the period JACK reports as starting at `raw`
    /// (its 32-bit frame time), `frames` long.
    mutating func advance(raw: UInt32, frames: UInt32) -> Int64 {
        defer { lastFrames = Int64(frames) }
        guard started else {
            started = true
            periodStart = Int64(raw)
            return periodStart
        }
        let expected = periodStart + lastFrames
        let reported = expected + Int64(Int32(bitPattern: raw &- UInt32(truncatingIfNeeded: expected)))
        if reported == expected {
            disagreements = 0
            periodStart = expected
        } else {
            disagreements += 1
            if disagreements >= DeviceClock.resyncAfter {
                disagreements = 0
                periodStart = reported
            } else {
                periodStart = expected
            }
        }
        return periodStart
    }
}
