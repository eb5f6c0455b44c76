import Glibc
import SamplerCore

/// OSC timetags (NTP format: seconds since 1900 and a 32-bit fraction) and their mapping to the
/// audio device's host clock.
///
/// A timetag names wall-clock time (CLOCK_REALTIME, as liblo's `lo_timetag_now` and
/// SuperCollider read it). JACK's clock (`jack_get_time`) is another clock (CLOCK_MONOTONIC_RAW in
/// JACK2 ≥ 1.9.13, CLOCK_MONOTONIC under PipeWire), which drifts against the wall clock and has no
/// fixed offset to it, so the offset is sampled afresh for every message (`ClockOffset`): a
/// wall-clock reading on each side of a host-clock reading, their mean taken as simultaneous
/// with it.
package enum OSCTime {
    /// Seconds from 1900-01-01 to 1970-01-01.
    package static let ntpToUnixSeconds: Int64 = 2_208_988_800

    /// Microseconds since 1970 of the timetag `seconds`.`fraction` (rounded to the nearest).
    package static func unixMicroseconds(seconds: UInt32, fraction: UInt32) -> Int64 {
        (Int64(seconds) - ntpToUnixSeconds) * 1_000_000 + Int64((UInt64(fraction) * 1_000_000 + (1 << 31)) >> 32)
    }

    /// The timetag of `microseconds` since 1970 (at or after 1970).
    package static func timetag(unixMicroseconds microseconds: Int64) -> (seconds: UInt32, fraction: UInt32) {
        let seconds = microseconds / 1_000_000, rest = microseconds % 1_000_000
        let fraction = (UInt64(rest) << 32 + 500_000) / 1_000_000
        return (UInt32(truncatingIfNeeded: seconds + ntpToUnixSeconds), UInt32(min(fraction, UInt64(UInt32.max))))
    }

    /// The wall clock now, in microseconds since 1970.
    package static func realtimeMicroseconds() -> Int64 {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        return Int64(ts.tv_sec) * 1_000_000 + Int64(ts.tv_nsec) / 1000
    }

    /// The host time (on the clock `hostNow` reads, in microseconds) of wall-clock time
    /// `microseconds` since 1970. Any thread.
    /// Of three samplings it keeps the tightest (`ClockOffset.sample`).
    package static func hostTime(unixMicroseconds microseconds: Int64, hostNow: () -> UInt64) -> UInt64 {
        let offset = ClockOffset.sample(source: realtimeMicroseconds, target: { Int64(hostNow()) })
        return UInt64(max(0, microseconds + offset))
    }
}
