/// Every period a witness recorded, compared with an offline render of the same program placed
/// on the device timeline: the device-timeline invariant says each one is exact (equal to the
/// render at its frames) or, for a period the engine could not render, silent.
public struct TimelineCheck: CustomStringConvertible {
    public enum Verdict: Equatable { case exact, silent, wrong }

    public private(set) var verdicts: [(start: Int64, count: Int, verdict: Verdict)] = []

    /// Compares each period of `capture` (channels in the render's order) with `render`, whose
    /// frame 0 is device frame `origin`. Periods before `origin` must be silent; periods past
    /// the render's end are not judged.
    /// Indices (into `verdicts`) of the periods whose stamp did not follow on from the period
    /// before: where the witness itself saw the device timeline jump (a skipped cycle, a late
    /// callback, a repeated stamp).
    public private(set) var discontinuities: [Int] = []

    public init(capture: Capture, render: [[Float]], origin: Int64) {
        var previousEnd: Int64?
        for p in capture.periods {
            if let previousEnd, p.start != previousEnd { discontinuities.append(verdicts.count) }
            previousEnd = p.start + Int64(p.count)
            let from = Int(p.start - capture.firstFrame)
            var exact = true, silent = true
            var beyond = false
            for c in capture.channels.indices {
                for i in 0..<p.count {
                    let got = capture.channels[c][from + i]
                    let t = Int(p.start - origin) + i
                    if t >= render[c].count { beyond = true; break }
                    let want: Float = t >= 0 ? render[c][t] : 0
                    if got != want { exact = false }
                    if got != 0 { silent = false }
                }
            }
            if beyond { break }
            verdicts.append((p.start, p.count, exact ? .exact : silent ? .silent : .wrong))
        }
    }

    public func count(_ v: Verdict) -> Int { verdicts.filter { $0.verdict == v }.count }

    /// Periods that are not exact although the witness saw the timeline run on without a jump
    /// within two periods of them. Even a synchronous server gives up on a client that is very
    /// late (an xrun); the invariant then allows a short inexact stretch, but only there.
    public var inexactAwayFromDiscontinuities: Int {
        verdicts.indices.filter { i in
            verdicts[i].verdict != .exact && !discontinuities.contains { abs($0 - i) <= 2 }
        }.count
    }

    /// Periods with verdict `v` away from the witness's discontinuities (as above).
    public func count(_ v: Verdict, awayFromDiscontinuities: Bool) -> Int {
        verdicts.indices.filter { i in
            verdicts[i].verdict == v && !discontinuities.contains { abs($0 - i) <= 2 }
        }.count
    }

    /// The longest run of consecutive periods that are not exact (wrong or silent where the
    /// render sounds count alike).
    public var longestInexactRun: Int {
        var longest = 0, run = 0
        for v in verdicts {
            if v.verdict == .exact { run = 0 } else { run += 1; longest = max(longest, run) }
        }
        return longest
    }

    /// The longest run of consecutive wrong periods.
    public var longestWrongRun: Int {
        var longest = 0, run = 0
        for v in verdicts {
            if v.verdict == .wrong { run += 1; longest = max(longest, run) } else { run = 0 }
        }
        return longest
    }

    /// Device frames of the first few wrong periods (for messages).
    public var firstWrong: [Int64] { Array(verdicts.filter { $0.verdict == .wrong }.prefix(5).map(\.start)) }

    public var description: String {
        "\(verdicts.count) periods: \(count(.exact)) exact, \(count(.silent)) silent, \(count(.wrong)) wrong, "
            + "\(discontinuities.count) jumps seen by the witness, \(inexactAwayFromDiscontinuities) inexact away from them; "
            + "longest inexact run \(longestInexactRun), longest wrong run \(longestWrongRun); first wrong at \(firstWrong)"
    }
}

/// The first index where `a` and `b` differ (nil when equal): cheap to report, unlike a diff of
/// two long arrays.
public func firstDifference(_ a: [Float], _ b: [Float]) -> Int? {
    if a.count != b.count { return min(a.count, b.count) }
    return a.indices.first { a[$0] != b[$0] }
}

/// OSC datagrams built byte by byte (for tests that send without liblo).
public enum OSCPacketBytes {
    /// An OSC string: the bytes, a NUL, padded to four.
    public static func padded(_ s: String) -> [UInt8] {
        var b = Array(s.utf8) + [0]
        while b.count % 4 != 0 { b.append(0) }
        return b
    }

    /// `path` with no argument, or one int32.
    public static func message(_ path: String, int: Int32? = nil) -> [UInt8] {
        var b = padded(path) + padded(int == nil ? "," : ",i")
        if let int { b += withUnsafeBytes(of: int.bigEndian) { Array($0) } }
        return b
    }

    /// A bundle of `elements` stamped `seconds`.`fraction` (NTP).
    public static func bundle(seconds: UInt32, fraction: UInt32 = 0, _ elements: [[UInt8]]) -> [UInt8] {
        var b = padded("#bundle") + withUnsafeBytes(of: seconds.bigEndian) { Array($0) } + withUnsafeBytes(of: fraction.bigEndian) { Array($0) }
        for e in elements { b += withUnsafeBytes(of: UInt32(e.count).bigEndian) { Array($0) } + e }
        return b
    }
}
