#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Where every beat of a tempo map falls at one sample rate, in frames from the map's start.
///
/// Nothing is accumulated beat by beat: a beat's position is the exact (unrounded) start of its
/// section plus the closed-form length of the beats before it in that section; section starts are
/// exact sums of exact section lengths. Callers round once, when they turn a position into a
/// frame. Within a section:
/// - constant tempo `t` in meter `n/d`: beat `b` is at `b × 240 × rate / (t × d)` (tempo counts
///   quarter notes, as in klick);
/// - a ramp from `t1` to `t2` over `N` beats has tempo `T(b) = t1 + (t2 − t1) × b / N`, linear in
///   the beat position as klick plays it, and beat `b` at the integral of `240 / (d × T)`:
///   `240 × rate / (d × k) × ln(1 + k × b / t1)` with `k = (t2 − t1) / N`;
/// - a tempo per beat: beat `i` lasts `240 × rate / (t_i × d)`.
///
/// Pure value; any thread.
package struct TempoMapTiming: Sendable {
    package let map: TempoMap
    package let sampleRate: Double
    /// Frames from the map's start to each section's first beat, and to the end of the map as a
    /// last entry (`+infinity` when the map is endless). Not rounded.
    package let sectionStarts: [Double]
    /// The bar index (from 0, count-in included) of each section's first bar, and the number of
    /// bars in the map as a last entry (`Int.max` when endless).
    package let sectionFirstBars: [Int]
    /// For tempo-per-beat sections: frames from the section's start to each of its beats, and
    /// to its end. Empty for other sections.
    private let beatStarts: [[Double]]

    package init(map: TempoMap, sampleRate: Double) {
        precondition(sampleRate > 0 && sampleRate.isFinite, "timing needs a positive sample rate")
        self.map = map
        self.sampleRate = sampleRate
        var beatStarts: [[Double]] = []
        for s in map.sections {
            guard case .perBeat(let tempos) = s.tempo else { beatStarts.append([]); continue }
            var starts = [0.0]
            starts.reserveCapacity(tempos.count + 1)
            var sum = 0.0
            for t in tempos {
                sum += 240 * sampleRate / (t * Double(s.meter.denominator))
                starts.append(sum)
            }
            beatStarts.append(starts)
        }
        self.beatStarts = beatStarts
        var starts: [Double] = [0], bars: [Int] = [0]
        for (i, s) in map.sections.enumerated() {
            if let n = s.bars, let beats = s.beatCount {
                starts.append(starts[i] + TempoMapTiming.offset(s, beatStarts[i], sampleRate, beats, 1))
                bars.append(bars[i] + n)
            } else {
                starts.append(.infinity)
                bars.append(.max)
            }
        }
        sectionStarts = starts
        sectionFirstBars = bars
    }

    /// The map's length in frames (not rounded); nil when it is endless.
    package var length: Double? { sectionStarts.last!.isFinite ? sectionStarts.last! : nil }

    /// Frames from the start of section `section` to beat position `numerator / denominator`
    /// (beats counted from the section's first beat, 0-based).
    package func offset(inSection section: Int, beat numerator: Int, per denominator: Int = 1) -> Double {
        TempoMapTiming.offset(map.sections[section], beatStarts[section], sampleRate, numerator, denominator)
    }

    /// Frames from the map's start to beat position `numerator / denominator` of `section`.
    package func position(section: Int, beat numerator: Int, per denominator: Int = 1) -> Double {
        sectionStarts[section] + offset(inSection: section, beat: numerator, per: denominator)
    }

    private static func offset(_ s: TempoSection, _ beatStarts: [Double], _ rate: Double, _ numerator: Int, _ denominator: Int) -> Double {
        let d = Double(s.meter.denominator)
        switch s.tempo {
        case .constant(let t):
            // The numerator stays an exact integer so that k subdivisions of a beat land where
            // round(k × length / n) says, with no accumulated error.
            return Double(numerator) * 240 * rate / (t * d * Double(denominator))
        case .ramp(let t1, let t2):
            let k = (t2 - t1) / Double(s.beatCount!)
            if k == 0 { return Double(numerator) * 240 * rate / (t1 * d * Double(denominator)) }
            let b = Double(numerator) / Double(denominator)
            return 240 * rate / (d * k) * log1p(k * b / t1)
        case .perBeat(let tempos):
            let i = numerator / denominator, part = numerator % denominator
            if part == 0 { return beatStarts[i] }
            return beatStarts[i] + Double(part) * 240 * rate / (tempos[i] * d * Double(denominator))
        }
    }

    /// The section and (fractional) beat position at `frames` from the map's start; nil before
    /// the start or at or after the end.
    package func locate(_ frames: Double) -> (section: Int, beat: Double)? {
        guard frames >= 0, frames < sectionStarts.last! else { return nil }
        // The last section whose start is at or before `frames`.
        var lo = 0, hi = map.sections.count - 1
        while lo < hi {
            let mid = (lo + hi + 1) / 2
            if sectionStarts[mid] <= frames { lo = mid } else { hi = mid - 1 }
        }
        let s = map.sections[lo]
        let f = frames - sectionStarts[lo]
        let d = Double(s.meter.denominator)
        var beat: Double
        switch s.tempo {
        case .constant(let t):
            beat = f * t * d / (240 * sampleRate)
        case .ramp(let t1, let t2):
            let k = (t2 - t1) / Double(s.beatCount!)
            beat = k == 0 ? f * t1 * d / (240 * sampleRate) : t1 / k * expm1(f * d * k / (240 * sampleRate))
        case .perBeat(let tempos):
            let starts = beatStarts[lo]
            var a = 0, b = tempos.count - 1
            while a < b {
                let mid = (a + b + 1) / 2
                if starts[mid] <= f { a = mid } else { b = mid - 1 }
            }
            beat = Double(a) + (f - starts[a]) * tempos[a] * d / (240 * sampleRate)
        }
        if let n = s.beatCount { beat = min(beat, Double(n)) }
        return (lo, max(0, beat))
    }

    /// The tempo (quarter notes per minute) at beat position `beat` of `section`.
    package func tempo(inSection section: Int, atBeat beat: Double) -> Double {
        let s = map.sections[section]
        switch s.tempo {
        case .constant(let t): return t
        case .ramp(let t1, let t2): return t1 + (t2 - t1) * beat / Double(s.beatCount!)
        case .perBeat(let tempos): return tempos[min(tempos.count - 1, max(0, Int(beat)))]
        }
    }

    /// The section holding bar `bar` (from 0, count-in included) and the bar's first beat within
    /// that section; nil at or beyond the end of the map.
    package func section(ofBar bar: Int) -> (section: Int, beat: Int)? {
        guard bar >= 0, bar < sectionFirstBars.last! else { return nil }
        var i = 0
        while sectionFirstBars[i + 1] <= bar { i += 1 }
        return (i, (bar - sectionFirstBars[i]) * map.sections[i].meter.beats)
    }

    /// Frames from the map's start to the first beat of bar `bar`; the map's length for the bar
    /// just after the last one; nil beyond.
    package func start(ofBar bar: Int) -> Double? {
        if let (s, beat) = section(ofBar: bar) { return position(section: s, beat: beat) }
        if bar == sectionFirstBars.last! { return length }
        return nil
    }
}
