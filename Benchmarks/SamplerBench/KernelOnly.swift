import CMixReference
import SamplerCore

/// SamplerCore's public mixing kernels (`Mixing.add`, `Mixing.addRamped`) driven by a minimal
/// loop over the C reference's voice array: the same job with none of the engine's per-voice
/// bookkeeping. Comparing it with the engine and with the C loop splits the engine's gap to C
/// into "kernel" and "everything around the kernel".
func renderKernelsOnly(_ w: MixWorkload) {
    let frames = w.frameCount
    w.referenceLeft.update(repeating: 0, count: frames)
    w.referenceRight.update(repeating: 0, count: frames)
    w.reference.withUnsafeMutableBufferPointer { voices in
        for v in voices.indices {
            var out = 0
            while out < frames {
                let position = Int(voices[v].position)
                let n = min(frames - out, Int(voices[v].frames) - position)
                let left = voices[v].left! + position, right = voices[v].right! + position
                if w.fades {
                    _ = Mixing.addRamped(left: left, right: right, into: w.referenceLeft + out, right: w.referenceRight + out,
                                         count: n, origin: voices[v].rampOrigin, step: voices[v].rampStep,
                                         firstIndex: Int(voices[v].rampElapsed), panLeft: voices[v].panLeft,
                                         panRight: voices[v].panRight)
                    voices[v].rampElapsed += Int64(n)
                } else {
                    Mixing.add(left: left, right: right, into: w.referenceLeft + out, right: w.referenceRight + out,
                               count: n, gainLeft: voices[v].gainLeft, gainRight: voices[v].gainRight)
                }
                out += n
                voices[v].position += Int64(n)
                if voices[v].position == voices[v].frames { voices[v].position = 0 }
            }
        }
    }
}

/// Interleaved rounds of engine, kernels-only and C on one workload; ns per voice-frame, medians.
func breakdown(_ w: MixWorkload, rounds: Int = 9) -> (engine: Double, kernels: Double, reference: Double) {
    let periods = max(16, (32 << 20) / (w.voiceCount * w.frameCount))
    var e: [Double] = [], k: [Double] = [], c: [Double] = []
    for round in 0...rounds {
        let t0 = threadCPUNanoseconds()
        for _ in 0..<periods { w.renderEngine() }
        let t1 = threadCPUNanoseconds()
        w.drainEvents()
        let t2 = threadCPUNanoseconds()
        for _ in 0..<periods { renderKernelsOnly(w) }
        let t3 = threadCPUNanoseconds()
        for _ in 0..<periods { w.renderReference() }
        let t4 = threadCPUNanoseconds()
        if round == 0 { continue }  // warm-up
        let scale = Double(periods * w.voiceCount * w.frameCount)
        e.append(Double(t1 - t0) / scale)
        k.append(Double(t3 - t2) / scale)
        c.append(Double(t4 - t3) / scale)
    }
    return (Sample(e).median, Sample(k).median, Sample(c).median)
}

/// The engine's cost per period with `voices` voices (0: its fixed cost alone) and the C
/// reference's for the same job, in ns per 128-frame period: the fastest of `batches` batches of
/// about 2.5 M voice-frames (20,000 periods without voices), thread CPU time (the fastest is the
/// least disturbed by other work).
func fixedCost(pool: SoundPool, voices: Int, kind: SourceKind, batches: Int = 30) -> (engine: Double, reference: Double) {
    let w = MixWorkload(pool: pool, voices: voices, kind: kind, frameCount: 128)
    let t = pairedBatches(w, rounds: batches, periods: voices == 0 ? 20_000 : max(100, 2_560_000 / (voices * 128)))
    return (t.engine.min() ?? 0, t.reference.min() ?? 0)
}
