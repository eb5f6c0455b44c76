/// The offset between two host clocks, sampled rather than assumed: JACK's clock
/// (`jack_get_time`) is CLOCK_MONOTONIC_RAW under JACK2 but CLOCK_MONOTONIC under PipeWire's
/// libjack, while Ableton Link's is CLOCK_MONOTONIC_RAW and an OSC timetag is wall-clock time.
/// Those clocks drift apart under NTP (tens of ppm: milliseconds within minutes), so every
/// crossing of a host time from one clock to another samples their offset afresh.
///
/// Pure: the clocks are passed in (any thread; the readings are the caller's).
public enum ClockOffset {
    /// `target − source`, in the clocks' unit: of `samples` readings of `target` taken between
    /// two readings of `source`, the one whose bracket is tightest, against the bracket's middle
    /// (a thread preempted between two readings widens that bracket, and would put the offset
    /// anywhere in it). `source` and `target` are read `2 × samples` and `samples` times.
    public static func sample(samples: Int = 3, source: () -> Int64, target: () -> Int64) -> Int64 {
        var best: (width: Int64, offset: Int64) = (.max, 0)
        for _ in 0..<max(1, samples) {
            let before = source()
            let reading = target()
            let after = source()
            let width = after &- before
            if width >= 0, width < best.width { best = (width, reading &- (before &+ width / 2)) }
        }
        return best.offset
    }
}
