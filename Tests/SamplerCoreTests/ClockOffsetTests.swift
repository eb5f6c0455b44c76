import Testing
@testable import SamplerCore

/// Host times crossing between clocks (issue 36): the offset is sampled each time, the tightest
/// of a few readings, so a drifting clock is followed and a preempted reading ignored.
@Suite struct ClockOffsetTests {
    /// Two simulated clocks in microseconds: `source` advances 1 µs per reading (and `stall` µs
    /// once, at reading `stallAt`, as if the thread were preempted there); `target` runs
    /// `ppm` faster than it from `offset` apart.
    final class Clocks {
        var now: Int64 = 1_000_000
        var reads = 0
        let ppm: Double, offset: Int64, stallAt: Int, stall: Int64
        init(ppm: Double, offset: Int64, stallAt: Int = -1, stall: Int64 = 0) {
            self.ppm = ppm; self.offset = offset; self.stallAt = stallAt; self.stall = stall
        }
        func tick() { now += 1; reads += 1; if reads == stallAt { now += stall } }
        func source() -> Int64 { tick(); return now }
        func target() -> Int64 { tick(); return offset + now + Int64((Double(now) * ppm / 1e6).rounded()) }
        /// The true offset at time `t`.
        func truth(at t: Int64) -> Int64 { offset + Int64((Double(t) * ppm / 1e6).rounded()) }
    }

    @Test func aPreemptedReadingIsNotTheOneTaken() {
        // The second reading of the first bracket stalls 5 ms: that bracket is wide, and its
        // middle 2.5 ms off. The tightest of three is exact to a microsecond.
        let c = Clocks(ppm: 0, offset: 123_456, stallAt: 2, stall: 5_000)
        let offset = ClockOffset.sample(source: c.source, target: c.target)
        #expect(abs(offset - 123_456) <= 1)
        // With only that one reading, the error would be half the stall.
        let alone = Clocks(ppm: 0, offset: 123_456, stallAt: 2, stall: 5_000)
        #expect(abs(ClockOffset.sample(samples: 1, source: alone.source, target: alone.target) - 123_456) > 2_000)
    }

    @Test func aClockDriftingUnderNTPIsFollowedBecauseEveryCrossingSamplesAgain() {
        // CLOCK_MONOTONIC slewed 50 ppm against CLOCK_MONOTONIC_RAW: after an hour, 180 ms apart.
        let c = Clocks(ppm: 50, offset: -7_000)
        let first = ClockOffset.sample(source: c.source, target: c.target)
        #expect(abs(first - c.truth(at: c.now)) <= 1)
        c.now += 3_600_000_000
        let later = ClockOffset.sample(source: c.source, target: c.target)
        #expect(abs(later - c.truth(at: c.now)) <= 1)
        // Mapping a host time with the offset sampled an hour before would be 180 ms off.
        #expect(abs(later - first) >= 179_000)
    }

    @Test func aClockGoingBackwardsBetweenReadingsIsNotTaken() {
        let values: [Int64] = [100, 5, 90, 200, 1_000_205, 202]
        var i = 0
        let next = { () -> Int64 in defer { i += 1 }; return values[i] }
        // Readings: (100, 5, 90): the source went back, skipped; (200, 1_000_205, 202): offset 1_000_004.
        #expect(ClockOffset.sample(samples: 2, source: next, target: next) == 1_000_004)
    }
}
