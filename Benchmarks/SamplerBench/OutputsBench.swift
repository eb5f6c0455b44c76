import SamplerCore

/// The cost of outputs beside the main mix: the same N voices rendered into the main
/// mix alone, and spread round robin over `outputs` stereo outputs
/// (`Engine.render(frameCount:periodStart:outputs:outputCount:)`), interleaved rounds of thread
/// CPU time; ns per voice-frame, medians. The per-voice work is the same kernel into another
/// buffer; what differs is one table lookup per voice per period, and zeroing and checking
/// `outputs` buffers instead of one.
func outputsComparison(pool: SoundPool, voices: Int, kind: SourceKind, outputs: Int, rounds: Int = 15) -> (main: Double, spread: Double) {
    let single = MixWorkload(pool: pool, voices: voices, kind: kind, frameCount: 128)
    let spread = MixWorkload(pool: pool, voices: voices, kind: kind, frameCount: 128)
    for p in 0..<voices { spread.engine.send(.setOutput(player: p, p % outputs)) }
    let buffers = (0..<(2 * outputs)).map { _ -> UnsafeMutablePointer<Float> in
        let b = UnsafeMutablePointer<Float>.allocate(capacity: 128)
        b.initialize(repeating: 0, count: 128)
        return b
    }
    let table = UnsafeMutablePointer<UnsafeMutablePointer<Float>>.allocate(capacity: 2 * outputs)
    for i in 0..<(2 * outputs) { table[i] = buffers[i] }
    defer {
        buffers.forEach { $0.deallocate() }
        table.deallocate()
    }
    let periods = max(16, (32 << 20) / (voices * 128))
    var start: Frame = 0
    var a: [Double] = [], b: [Double] = []
    for round in 0...rounds {
        let t0 = threadCPUNanoseconds()
        for _ in 0..<periods { single.renderEngine() }
        let t1 = threadCPUNanoseconds()
        single.drainEvents()
        let t2 = threadCPUNanoseconds()
        for _ in 0..<periods {
            spread.engine.render(frameCount: 128, periodStart: start, outputs: table, outputCount: outputs)
            start += 128
        }
        let t3 = threadCPUNanoseconds()
        spread.drainEvents()
        if round == 0 { continue }  // warm-up
        let scale = Double(periods * voices * 128)
        a.append(Double(t1 - t0) / scale)
        b.append(Double(t3 - t2) / scale)
    }
    return (Sample(a).median, Sample(b).median)
}
