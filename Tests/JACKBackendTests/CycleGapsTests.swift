@testable import JACKBackend
import Testing

/// `CycleGaps`: the host clock's cycles that JACK's frame time did not count (a netjack2
/// slave's missed cycles), with wake-up jitter and clock drift not adding up.
struct CycleGapsTests {
    let rate = 48_000.0, frames: Int64 = 256
    var period: Double { Double(frames) * 1e6 / rate }

    /// Feeds cycles woken at `times` (µs) and stamped `stamps`; the uncounted frames in all.
    func uncounted(times: [Double], stamps: [Int64]) -> Int64 {
        var gaps = CycleGaps()
        return zip(times, stamps).reduce(0) { $0 + gaps.cycle(at: UInt64($1.0), stamp: $1.1, frames: frames, sampleRate: rate) }
    }

    @Test func steadyCyclesWithJitterAndDriftCountNothing() {
        var rng = SystemRandomNumberGenerator()
        // 100 ppm slow against the host clock, wake-ups up to 40% of a period late.
        let times = (0..<20_000).map { 1e6 + Double($0) * period * 1.0001 + Double.random(in: 0...0.4, using: &rng) * period }
        #expect(uncounted(times: times, stamps: (0..<20_000).map { Int64($0) * frames }) == 0)
    }

    @Test func aLateWakeUpThenOneOnTimeCancel() {
        var times = (0..<100).map { 1e6 + Double($0) * period }
        times[50] += 0.7 * period
        #expect(uncounted(times: times, stamps: (0..<100).map { Int64($0) * frames }) == 0)
    }

    /// A stopped server: nine cycles the host clock saw pass, and the frame time resuming where
    /// it stopped (its first cycle after the restart stamped as the last before).
    @Test func cyclesAServerMissedAreCounted() {
        let times = (0..<50).map { 1e6 + Double($0) * period } + (59..<120).map { 1e6 + Double($0) * period + 300 }
        let stamps = (0..<50).map { Int64($0) * frames } + (49..<110).map { Int64($0) * frames }
        #expect(uncounted(times: times, stamps: stamps) == 10 * frames)
    }

    /// A server whose frame time follows its clock across a gap (JACK2's `ResetFrameTime`, a
    /// skipped cycle): nothing uncounted.
    @Test func aFrameTimeThatCountsTheGapLeavesNothing() {
        let times = (0..<50).map { 1e6 + Double($0) * period } + (59..<120).map { 1e6 + Double($0) * period }
        let stamps = (0..<50).map { Int64($0) * frames } + (59..<120).map { Int64($0) * frames }
        #expect(uncounted(times: times, stamps: stamps) == 0)
    }

    /// A skip of part of a period, counted by the frame time too (2.7 periods), and a new period
    /// size: nothing uncounted.
    @Test func partialSkipsAndANewPeriodSizeLeaveNothing() {
        var gaps = CycleGaps()
        var total: Int64 = 0
        var t = 1e6, stamp: Int64 = 0
        for _ in 0..<50 { total += gaps.cycle(at: UInt64(t), stamp: stamp, frames: 256, sampleRate: rate); t += period; stamp += 256 }
        t += 1.7 * period; stamp += Int64(1.7 * 256)
        for _ in 0..<50 { total += gaps.cycle(at: UInt64(t), stamp: stamp, frames: 256, sampleRate: rate); t += period; stamp += 256 }
        for _ in 0..<50 { total += gaps.cycle(at: UInt64(t), stamp: stamp, frames: 512, sampleRate: rate); t += 2 * period; stamp += 512 }
        #expect(total == 0)
    }
}
