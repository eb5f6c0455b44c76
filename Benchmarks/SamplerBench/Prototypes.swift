import Foundation
import SamplerCore

/// Where the engine's time goes, and what its memory layout gains:
///  - kernels only: the engine's kernels driven over the C reference's dense voice array, with
///    none of the engine's bookkeeping (the rest of the engine's time is that bookkeeping);
///  - idle slots: the cost per period of each player slot that is not playing (the engine walks
///    a list of sounding voices, so this should be about 0);
///  - huge pages: the same voices with their sounds on the heap (4 KiB pages) and in
///    `HugePageSampleMemory` (2 MB pages), where the sound-file loaders put every sound.
func benchPrototypes(pool: SoundPool, report: Report, quick: Bool) {
    report.section("Where the time goes (thread CPU time, medians of 9)")
    report.line("  voices  source     engine   kernels only    C ref   engine − kernels, ns per voice per period")
    var rows: [[String: Any]] = []
    for n in quick ? [64, 512] : [64, 512, 2048, 4096] {
        for kind in SourceKind.allCases {
            let b = breakdown(MixWorkload(pool: pool, voices: n, kind: kind, frameCount: 128))
            let perVoice = (b.engine - b.kernels) * 128
            report.line("  \(col(String(n), width: 6))  \(kind.rawValue.padding(toLength: 7, withPad: " ", startingAt: 0))"
                + "\(col(b.engine, 3, width: 9))\(col(b.kernels, 3, width: 15))\(col(b.reference, 3, width: 9))\(col(perVoice, 1, width: 14))")
            rows.append(["voices": n, "source": kind.rawValue, "engine": round(b.engine, 4), "kernelsOnly": round(b.kernels, 4),
                         "reference": round(b.reference, 4)])
        }
    }

    // Idle slots: 8 voices playing in an engine of 8 players, and in one of 4,096.
    let small = MixWorkload(pool: pool, voices: 8, kind: .mono, frameCount: 128)
    let large = MixWorkload(pool: pool, voices: 8, kind: .mono, frameCount: 128, slots: 4096)
    var smallTimes: [Double] = [], largeTimes: [Double] = []
    for _ in 0..<9 {
        smallTimes.append(timeEngine(small, rounds: 1, voiceFramesPerBatch: 1 << 20))
        largeTimes.append(timeEngine(large, rounds: 1, voiceFramesPerBatch: 1 << 20))
    }
    let idle = (Sample(largeTimes).median - Sample(smallTimes).median) / 4088
    report.line(String(format: "  an idle player slot costs %.2f ns per period (8 voices in 4,096 slots: %.1f µs per period, in 8 slots: %.1f µs)",
                       idle, Sample(largeTimes).median / 1000, Sample(smallTimes).median / 1000))

    // Huge pages: the same mono voices with their sounds on the heap, then on 2 MB pages.
    let n = quick ? 512 : 4096
    let heap = SoundPool(memory: nil)
    _ = heap.sounds(.mono, count: n)
    _ = pool.sounds(.mono, count: n)
    let bytes = anonymousHugePageBytes()
    let before = breakdown(MixWorkload(pool: heap, voices: n, kind: .mono, frameCount: 128))
    let pacedBefore = pacedRun(MixWorkload(pool: heap, voices: n, kind: .mono, frameCount: 128), periods: quick ? 200 : 1000)
    let pacedBeforeC = pacedRun(MixWorkload(pool: heap, voices: n, kind: .mono, frameCount: 128), periods: quick ? 200 : 1000, reference: true)
    let after = breakdown(MixWorkload(pool: pool, voices: n, kind: .mono, frameCount: 128))
    let pacedAfter = pacedRun(MixWorkload(pool: pool, voices: n, kind: .mono, frameCount: 128), periods: quick ? 200 : 1000)
    let pacedAfterC = pacedRun(MixWorkload(pool: pool, voices: n, kind: .mono, frameCount: 128), periods: quick ? 200 : 1000, reference: true)
    report.line("  sound memory, \(n) mono voices (\((n * SoundPool.frames * 4) >> 20) MB of samples): heap (4 KiB pages) → HugePageSampleMemory"
        + " (\(bytes >> 20) MB of this process on 2 MB pages):")
    report.line(String(format: "    back to back: engine %.3f → %.3f, kernels only %.3f → %.3f, C %.3f → %.3f ns/voice-frame",
                       before.engine, after.engine, before.kernels, after.kernels, before.reference, after.reference))
    report.line(String(format: "    paced, engine: mean %.1f%% → %.1f%%, p99 %.1f%% → %.1f%% of the period; C: mean %.1f%% → %.1f%%, p99 %.1f%% → %.1f%%",
                       pacedBefore.mean * 100, pacedAfter.mean * 100, pacedBefore.p99 * 100, pacedAfter.p99 * 100,
                       pacedBeforeC.mean * 100, pacedAfterC.mean * 100, pacedBeforeC.p99 * 100, pacedAfterC.p99 * 100))
    report.set("prototypes", [
        "breakdown": rows,
        "idleSlotNsPerPeriod": round(idle, 3),
        "hugePages": ["voices": n, "hugePageMB": bytes >> 20,
                      "engineBefore": round(before.engine, 4), "engineAfter": round(after.engine, 4),
                      "kernelsBefore": round(before.kernels, 4), "kernelsAfter": round(after.kernels, 4),
                      "referenceBefore": round(before.reference, 4), "referenceAfter": round(after.reference, 4),
                      "pacedMeanBefore": round(pacedBefore.mean, 4), "pacedMeanAfter": round(pacedAfter.mean, 4),
                      "pacedP99Before": round(pacedBefore.p99, 4), "pacedP99After": round(pacedAfter.p99, 4),
                      "referencePacedMeanBefore": round(pacedBeforeC.mean, 4), "referencePacedMeanAfter": round(pacedAfterC.mean, 4),
                      "referencePacedP99Before": round(pacedBeforeC.p99, 4), "referencePacedP99After": round(pacedAfterC.p99, 4)] as [String: Any],
    ])
}
