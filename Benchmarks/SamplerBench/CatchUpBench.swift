import SamplerCore

/// The callback after a lost stretch: 512 voices of every kind (plain mono and stereo,
/// varispeed at 0.77 and 1.5, a gain ramp, a stop fade and a declick tail running through the
/// stretch, meters, envelope voices of an instrument), then one 128-frame period stamped 10 s
/// (480,000 frames) after the last: that period moves every voice over the lost frames (in
/// closed form) and renders its own 128 frames. Timed in thread CPU time, one fresh engine per
/// trial; beside it, an ordinary period of the same voices and the 3,750 periods of rendering
/// those 10 s. Streamed voices are not in it (they need a disk thread; their catch-up is the
/// read index moved on, in `Mixing.addStream`).
func benchCatchUp(pool: SoundPool, report: Report, trials: Int) {
    let voices = 512, frameCount = 128, lost: Frame = 480_000
    let left = UnsafeMutablePointer<Float>.allocate(capacity: frameCount)
    let right = UnsafeMutablePointer<Float>.allocate(capacity: frameCount)
    defer { left.deallocate(); right.deallocate() }
    let mono = Array(pool.sounds(.mono, count: voices / 2)), stereo = Array(pool.sounds(.stereo, count: voices / 2))

    /// A fresh engine playing the 512 voices, rendered for 16 periods.
    func setUp() -> (engine: Engine, next: Frame) {
        let engine = Engine(configuration: EngineConfiguration(maxPlayers: 1024, maxSounds: 2048))
        var ids: [SoundID] = []
        for (m, s) in zip(mono, stereo) { ids.append(try! engine.register(m)); ids.append(try! engine.register(s)) }
        // Players 448 ..< 512: one instrument's 64 voices with an envelope (attack, hold, a long
        // decay to a sustain, looped).
        engine.setInstruments([InstrumentDefinition(firstPlayer: 448, voiceCount: 64, loops: -1,
                                                    layers: [InstrumentLayer(sounds: Array(ids[448..<512]))],
                                                    envelope: AmplitudeEnvelope(attackFrames: 2_000, holdFrames: 1_000, decayFrames: 200_000,
                                                                                sustain: 0.4, releaseFrames: 20_000))])
        for p in 0..<448 {
            let sound = ids[p]
            switch p % 7 {
            case 0: engine.send(.start(player: p, sound: sound, at: 0, from: Frame(p * 37), loops: -1))
            case 1: engine.send(.start(player: p, sound: sound, at: 0, loops: -1, pan: PanGains(pan: 0.3)))
            case 2: engine.send(.start(player: p, sound: sound, at: 0, loops: -1, rate: 0.77))
            case 3: engine.send(.start(player: p, sound: sound, at: 0, loops: 1_000, rate: 1.5))
            case 4:
                engine.send(.start(player: p, sound: sound, at: 0, loops: -1))
                engine.send(.setGain(player: p, Gain(linear: 0.1), fadeFrames: 900_000, at: 100))
            case 5:
                engine.send(.start(player: p, sound: sound, at: 0, loops: -1))
                engine.send(.stop(player: p, at: 1_000, fadeFrames: 400_000))
            default:
                engine.send(.start(player: p, sound: sound, at: 0, loops: -1))
                engine.send(.setMetering(player: p, true))
                // Restarted with a 5 s declick: its tail fades through the stretch.
                engine.send(.start(player: p, sound: ids[(p + 1) % 448], at: 1_500, loops: -1, declickFrames: 240_000))
            }
        }
        for k in 0..<64 { engine.send(.trigger(instrument: 0, velocity: 100, at: Frame(k))) }
        var next: Frame = 0
        for _ in 0..<16 {
            engine.render(frameCount: frameCount, periodStart: next, left: left, right: right)
            next += Frame(frameCount)
        }
        engine.drainEvents { _ in }
        return (engine, next)
    }

    var catchUp: [Double] = [], ordinary: [Double] = []
    var rendered = 0.0
    for trial in 0..<trials {
        let (engine, next) = setUp()
        if trial == 0 {
            // The same 10 s rendered period by period, for scale.
            let t0 = threadCPUNanoseconds()
            var at = next
            for _ in 0..<(Int(lost) / frameCount) {
                engine.render(frameCount: frameCount, periodStart: at, left: left, right: right)
                at += Frame(frameCount)
                if at % 8192 == 0 { engine.drainEvents { _ in } }
            }
            rendered = Double(threadCPUNanoseconds() - t0) / 1_000
            continue
        }
        let t0 = threadCPUNanoseconds()
        engine.render(frameCount: frameCount, periodStart: next, left: left, right: right)
        let t1 = threadCPUNanoseconds()
        engine.render(frameCount: frameCount, periodStart: next + Frame(frameCount) + lost, left: left, right: right)
        let t2 = threadCPUNanoseconds()
        precondition(engine.lostFrameCount == Int(lost) && engine.clockRestartCount == 0)
        ordinary.append(Double(t1 - t0) / 1_000)
        catchUp.append(Double(t2 - t1) / 1_000)
    }
    let period = Double(frameCount) / 48_000 * 1e6
    let c = Sample(catchUp), o = Sample(ordinary)
    report.section("9. Catch-up after a lost stretch (issue 38): 512 voices of every kind, 10 s (480,000 frames) lost, 128-frame periods")
    report.line(String(format: "  the period after the stretch: median %.1f µs, max %.1f µs (%.1f%% / %.1f%% of the %.0f µs period; %d trials)",
                       c.median, c.max, 100 * c.median / period, 100 * c.max / period, period, catchUp.count))
    report.line(String(format: "  an ordinary period of the same voices: median %.1f µs", o.median))
    report.line(String(format: "  rendering the 10 s period by period instead: %.0f µs", rendered))
    report.set("catchUp", ["voices": voices, "lostFrames": Int(lost), "medianMicroseconds": round(c.median, 1),
                           "maxMicroseconds": round(c.max, 1), "ordinaryMicroseconds": round(o.median, 1),
                           "renderedMicroseconds": round(rendered, 0)])
    report.target("period after a 10 s lost stretch, 512 voices", value: String(format: "%.1f%% of a period (max %.1f%%)", 100 * c.median / period, 100 * c.max / period),
                  target: "< 10% (median)", met: c.median < 0.1 * period)
}
