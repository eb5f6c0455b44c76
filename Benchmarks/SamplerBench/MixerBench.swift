import CMixReference
import Foundation
import SamplerCore

/// Back-to-back timing of one workload: the engine and the C reference take turns, batch by
/// batch, so that both see the same machine state; each batch covers about 16 M voice-frames and
/// is timed in thread CPU time.
struct PairTiming {
    /// Nanoseconds per period, median over the rounds.
    var engine: Double
    var reference: Double
    /// Median over the rounds of engine / reference within each round: steadier than the ratio of
    /// the medians when the machine's load drifts (each pair ran back to back).
    var ratio: Double
}

func timeBackToBack(_ w: MixWorkload, rounds: Int = 15, voiceFramesPerBatch: Int = 16 << 20) -> PairTiming {
    let periods = min(w.maxPeriodsPerBatch, max(16, voiceFramesPerBatch / (w.voiceCount * w.frameCount)))
    let (engine, reference) = pairedBatches(w, rounds: rounds, periods: periods)
    let ratios = zip(engine, reference).map { $0 / $1 }
    return PairTiming(engine: Sample(engine).median, reference: Sample(reference).median, ratio: Sample(ratios).median)
}

/// `rounds` batches of `periods` periods, engine then C reference in each round, after one
/// untimed batch of each: nanoseconds per period of every batch, thread CPU time.
func pairedBatches(_ w: MixWorkload, rounds: Int, periods: Int) -> (engine: [Double], reference: [Double]) {
    var engine: [Double] = [], reference: [Double] = []
    // One untimed batch each to fault in and warm everything.
    for _ in 0..<periods { w.renderEngine() }
    w.drainEvents()
    for _ in 0..<periods { w.renderReference() }
    w.refillReference()
    for _ in 0..<rounds {
        let t0 = threadCPUNanoseconds()
        for _ in 0..<periods { w.renderEngine() }
        let t1 = threadCPUNanoseconds()
        w.drainEvents()
        let t2 = threadCPUNanoseconds()
        for _ in 0..<periods { w.renderReference() }
        let t3 = threadCPUNanoseconds()
        w.refillReference()
        engine.append(Double(t1 - t0) / Double(periods))
        reference.append(Double(t3 - t2) / Double(periods))
    }
    return (engine, reference)
}

/// Engine-only timing: nanoseconds per period (median of batches) for a workload.
func timeEngine(_ w: MixWorkload, rounds: Int = 5, voiceFramesPerBatch: Int = 32 << 20) -> Double {
    let periods = min(w.maxPeriodsPerBatch, max(16, voiceFramesPerBatch / (w.voiceCount * w.frameCount)))
    for _ in 0..<periods { w.renderEngine() }
    w.drainEvents()
    var times: [Double] = []
    for _ in 0..<rounds {
        let t0 = threadCPUNanoseconds()
        for _ in 0..<periods { w.renderEngine() }
        let t1 = threadCPUNanoseconds()
        w.drainEvents()
        times.append(Double(t1 - t0) / Double(periods))
    }
    return Sample(times).median
}

/// A variant of the mixing job: plain gains, a gain ramp on every voice, varispeed, each
/// player with a declick tail fading out beside its voice (two sounds read per player), streams,
/// or an instrument's voices steered by controllers every period.
enum MixVariant: String, CaseIterable {
    case plain = "gain+pan"
    case ramp = "ramp"
    case varispeed = "rate 1.5"
    case tails = "+tail"
    case streamed = "streamed"
    /// An instrument's voices whose gain and pan a controller moves every period.
    case controlled = "cc gain+pan"
    /// The same, each change of level gliding over 1 ms (48 frames) as a patch's instruments
    /// glide (at least 1 ms), the pan moving on the change's frame.
    case glided = "cc glide"
    /// An instrument's voices through a 2-pole low-pass whose cutoff a controller moves every period.
    case filtered = "lpf cc"

    var fades: Bool { self == .ramp }
    var controlled: Bool { self == .controlled || self == .glided }
    var glideFrames: Int { self == .glided ? 48 : 0 }
    var filtered: Bool { self == .filtered }
    var tails: Bool { self == .tails }
    var streamed: Bool { self == .streamed }
    /// Its name for `--jobs`.
    var name: String {
        switch self {
        case .plain: "plain"
        case .ramp: "ramp"
        case .varispeed: "varispeed"
        case .tails: "tails"
        case .streamed: "streamed"
        case .controlled: "cc"
        case .glided: "ccglide"
        case .filtered: "filter"
        }
    }
    var rate: Double { self == .varispeed ? 1.5 : 1 }
}

/// One row of the mixer table, measured in one process: `sampler-bench --row JOB:SOURCE:VOICES`
/// prints `ROW ratio engine reference agreement` (ns per voice-frame).
func measureMixerRow(pool: SoundPool, variant: MixVariant, kind: SourceKind, voices n: Int)
    -> (ratio: Double, engine: Double, reference: Double, agreement: Double) {
    let w = MixWorkload(pool: pool, voices: n, kind: kind, fades: variant.fades, rate: variant.rate,
                        tails: variant.tails, streamed: variant.streamed, controlled: variant.controlled,
                        glideFrames: variant.glideFrames, filtered: variant.filtered, frameCount: 128)
    let agreement = w.checkAgreement()
    let t = timeBackToBack(w)
    let frames = Double(n * 128)
    return (t.ratio, t.engine / frames, t.reference / frames, agreement)
}

/// The row `--row JOB:SOURCE:VOICES` names, or nil.
func parseMixerRow(_ text: String) -> (MixVariant, SourceKind, Int)? {
    let parts = text.split(separator: ":").map(String.init)
    guard parts.count == 3, let variant = MixVariant.allCases.first(where: { $0.name == parts[0] }),
          let kind = SourceKind(rawValue: parts[1]), let n = Int(parts[2]), n > 0 else { return nil }
    return (variant, kind, n)
}

/// Runs `executable --row …` in a fresh process and reads its result line.
func mixerRowInFreshProcess(executable: String, variant: MixVariant, kind: SourceKind, voices n: Int)
    -> (ratio: Double, engine: Double, reference: Double, agreement: Double)? {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: executable)
    process.arguments = ["--row", "\(variant.name):\(kind.rawValue):\(n)"]
    let pipe = Pipe()
    process.standardOutput = pipe
    do { try process.run() } catch { return nil }
    let data = pipe.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    guard process.terminationStatus == 0, let text = String(data: data, encoding: .utf8),
          let line = text.split(separator: "\n").first(where: { $0.hasPrefix("ROW ") }) else { return nil }
    let fields = line.split(separator: " ").dropFirst().compactMap { Double($0) }
    guard fields.count == 4 else { return nil }
    return (fields[0], fields[1], fields[2], fields[3])
}

/// 1 and 7: mixer cost per voice-frame against the C reference, and the machine's read bandwidth.
/// Each row is measured in `processes` fresh processes (every row once, then every row again, so
/// that a drift of the machine spreads over all rows); its ratio is the median of theirs, and its
/// spread their lower and upper quartiles (with 5 processes: the second lowest and the second
/// highest, so that one process whose memory happened to be laid out badly does not decide). A
/// target is met only when the upper quartile is within it; a row whose quartiles straddle its
/// target is measured in more processes (up to twice as many in all) until they do not.
func benchMixer(pool: SoundPool, report: Report, voiceCounts: [Int], jobs: Set<String>? = nil, processes: Int, executable: String) {
    report.section("1 + 7. Mixer cost, ns per voice-frame (128-frame periods, back-to-back, thread CPU time; "
        + "each row in \(processes) fresh processes)")
    report.line("   each voice loops its own 0.5 s sound (distinct memory) with its own gain and pan;")
    report.line("   C ref = the same job as a plain C loop (-O3 -march=native), timed in the same run, batch for batch;")
    report.line("   engine/C = in each process the median of 15 batch pairs' ratios; shown: the median over the processes "
        + "and [lower–upper quartile]; a target is met when the upper quartile is within it")
    let mismatches = checkKernelsAgainstFormula()
    report.line("   kernels (Mixing.add/addRamped) vs the plain per-frame formula, 4000 random cases: "
        + (mismatches == 0 ? "bit-identical" : "\(mismatches) samples differ"))
    if mismatches != 0 { report.fail("the mixing kernels differ from the per-frame formula in \(mismatches) samples") }
    report.set("kernelMismatches", mismatches)
    var rowsToRun: [(MixVariant, SourceKind, Int)] = []
    for variant in MixVariant.allCases where jobs?.contains(variant.name) ?? true {
        for kind in SourceKind.allCases {
            for n in voiceCounts { rowsToRun.append((variant, kind, n)) }
        }
    }
    var results = [[(ratio: Double, engine: Double, reference: Double, agreement: Double)]](repeating: [], count: rowsToRun.count)
    for pass in 0..<processes {
        report.line("   pass \(pass + 1) of \(processes) …")
        for (r, row) in rowsToRun.enumerated() {
            let result = processes == 1 ? measureMixerRow(pool: pool, variant: row.0, kind: row.1, voices: row.2)
                : mixerRowInFreshProcess(executable: executable, variant: row.0, kind: row.1, voices: row.2)
            if let result { results[r].append(result) } else {
                report.fail("the mixer row \(row.0.name) \(row.1.rawValue) \(row.2) failed in a fresh process")
            }
        }
    }
    // Rows whose quartiles straddle their target (the lower within it, the upper not): measured
    // in more fresh processes, up to as many again, until they no longer do. A ratio near
    // its target otherwise decides the verdict by chance from one run to the next.
    func limit(_ n: Int) -> Double { n >= 64 ? 1.0 : 1.5 }
    func straddles(_ r: Int) -> Bool {
        guard processes > 1, !results[r].isEmpty else { return false }
        let ratios = Sample(results[r].map(\.ratio))
        return ratios.quantile(0.25) <= limit(rowsToRun[r].2) && ratios.quantile(0.75) > limit(rowsToRun[r].2)
    }
    var extra = 0
    while extra < processes {
        let uncertain = rowsToRun.indices.filter(straddles)
        if uncertain.isEmpty { break }
        extra += 1
        report.line("   extra pass \(extra): \(uncertain.count) row(s) whose quartiles straddle their target …")
        for r in uncertain {
            let row = rowsToRun[r]
            if let result = mixerRowInFreshProcess(executable: executable, variant: row.0, kind: row.1, voices: row.2) {
                results[r].append(result)
            } else {
                report.fail("the mixer row \(row.0.name) \(row.1.rawValue) \(row.2) failed in a fresh process")
            }
        }
    }
    report.line("  voices  source  job         engine    C ref  engine/C  [quartiles]   processes   outputs agree to")
    var rows: [[String: Any]] = []
    var upper: [String: Double] = [:], middle: [String: Double] = [:], lower: [String: Double] = [:]
    for (r, row) in rowsToRun.enumerated() where !results[r].isEmpty {
        let (variant, kind, n) = row
        let ratios = Sample(results[r].map(\.ratio))
        let engine = Sample(results[r].map(\.engine)).median, reference = Sample(results[r].map(\.reference)).median
        let agreement = results[r].map(\.agreement).max() ?? 0
        report.line("  \(col(String(n), width: 6))  \(kind.rawValue.padding(toLength: 6, withPad: " ", startingAt: 0))  "
            + "\(variant.rawValue.padding(toLength: 9, withPad: " ", startingAt: 0))"
            + "\(col(engine, 3, width: 10))\(col(reference, 3))\(col(ratios.median, 2, width: 10))"
            + "  [\(String(format: "%.2f–%.2f", ratios.quantile(0.25), ratios.quantile(0.75)))]"
            + "\(col(String(results[r].count), width: 8))      " + String(format: "%.1e", agreement))
        if agreement > 1e-4 { report.fail("engine and C reference disagree (\(agreement)) at \(n) \(kind) voices, \(variant.rawValue)") }
        rows.append(["voices": n, "source": kind.rawValue, "job": variant.rawValue, "engineNsPerVoiceFrame": round(engine, 4),
                     "referenceNsPerVoiceFrame": round(reference, 4), "ratio": round(ratios.median, 3),
                     "ratioLowerQuartile": round(ratios.quantile(0.25), 3), "ratioUpperQuartile": round(ratios.quantile(0.75), 3),
                     "ratioLowest": round(ratios.min, 3), "ratioHighest": round(ratios.max, 3), "processes": results[r].count])
        let key = "\(variant.name)-\(kind.rawValue)-\(n)"
        upper[key] = ratios.quantile(0.75)
        middle[key] = ratios.median
        lower[key] = ratios.quantile(0.25)
    }
    report.set("mixer", rows)
    // Every job at or below its C reference from 64 voices on, within 1.5× below: met when the
    // upper quartile of the processes' ratios is within the target, for mono and for stereo.
    for variant in MixVariant.allCases where jobs?.contains(variant.name) ?? true {
        for n in voiceCounts {
            let keys = ["\(variant.name)-mono-\(n)", "\(variant.name)-stereo-\(n)"]
            let worst = keys.map { upper[$0] ?? 0 }.max() ?? 0
            let worstKey = keys.max { (upper[$0] ?? 0) < (upper[$1] ?? 0) } ?? keys[0]
            let bound = limit(n)
            report.target("\(variant.name) vs C at \(n) voices",
                          value: String(format: "%.2f× [%.2f–%.2f] (worst of mono/stereo)", middle[worstKey] ?? 0, lower[worstKey] ?? 0, worst),
                          target: String(format: "≤ %.1f× (upper quartile)", bound), met: worst <= bound)
        }
    }

    // Single-core read bandwidth: sum 1 GiB of 64-bit words (far beyond the caches).
    let words = 1 << 27
    let data = UnsafeMutablePointer<UInt64>.allocate(capacity: words)
    defer { data.deallocate() }
    for i in 0..<words { data[i] = UInt64(truncatingIfNeeded: i) }
    var best = Double.infinity, sink: UInt64 = 0
    for _ in 0..<5 {
        let t0 = threadCPUNanoseconds()
        sink &+= cmix_read_sum(data, words)
        best = min(best, Double(threadCPUNanoseconds() - t0))
    }
    let gbPerSecond = Double(words * 8) / best
    report.line(String(format: "  single-core read bandwidth: %.1f GB/s (1 GiB summed, best of 5; checksum %llu)",
                       gbPerSecond, sink % 10))
    report.line(String(format: "  → a mono voice-frame reads 4 bytes: %.3f ns at that bandwidth; stereo %.3f ns",
                       4 / gbPerSecond, 8 / gbPerSecond))
    report.set("readBandwidthGBps", round(gbPerSecond, 2))
}

/// 2: voices that fit in half a period at 48 kHz, back to back, found by bisection.
func benchVoicesPerBudget(pool: SoundPool, report: Report) {
    report.section("2. Voices that fit in 50% of one period at 48 kHz (one core, back-to-back periods)")
    report.line("  period   budget(50%)   mono voices   stereo voices")
    var rows: [[String: Any]] = []
    for frames in [64, 128, 256] {
        let budget = 0.5 * Double(frames) / 48_000 * 1e9
        var found: [SourceKind: Int] = [:]
        for kind in SourceKind.allCases {
            found[kind] = largestVoiceCount(maxTime: budget) { n in
                timeEngine(MixWorkload(pool: pool, voices: n, kind: kind, fades: false, frameCount: frames), rounds: 3)
            }
        }
        report.line("  \(col(String(frames), width: 6))\(col(budget / 1000, 1, width: 11)) µs"
            + "\(col(String(found[.mono]!), width: 14))\(col(String(found[.stereo]!), width: 16))")
        rows.append(["periodFrames": frames, "budgetMicroseconds": round(budget / 1000, 2),
                     "monoVoices": found[.mono]!, "stereoVoices": found[.stereo]!])
    }
    report.set("voicesIn50PercentBackToBack", rows)
}

/// The largest N (to about 2%) whose `cost(N)` stays within `maxTime`, assuming cost grows with N.
func largestVoiceCount(maxTime: Double, start: Int = 1024, cost: (Int) -> Double) -> Int {
    var lo = 0, hi = start
    // Grow until over budget.
    while cost(hi) <= maxTime {
        lo = hi
        hi *= 2
        if hi > 1 << 16 { return lo }
    }
    while Double(hi - lo) > 0.02 * Double(hi) && hi - lo > 8 {
        let mid = (lo + hi) / 2
        if cost(mid) <= maxTime { lo = mid } else { hi = mid }
    }
    return lo
}
