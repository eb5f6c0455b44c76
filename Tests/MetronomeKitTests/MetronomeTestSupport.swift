import Foundation
import SamplerCore
@testable import MetronomeKit
import ProgramHost
@testable import Scheduling

// Offline renders of the metronome and the onsets in them, shared by the MetronomeKit suites.

/// Onsets in a stream of blocks: the first sample above `threshold` after `quietGap` samples at
/// or below it, as absolute frames.
struct OnsetDetector {
    var threshold: Float = 0.02
    var quietGap = 300
    private var quiet = Int.max
    private(set) var onsets: [Frame] = []
    private(set) var peaks: [Float] = []

    init(threshold: Float = 0.02, quietGap: Int = 300) {
        self.threshold = threshold
        self.quietGap = quietGap
    }

    mutating func scan(_ samples: UnsafePointer<Float>, count: Int, at start: Frame) {
        for i in 0..<count {
            let x = abs(samples[i])
            if x > threshold {
                if quiet >= quietGap { onsets.append(start + Frame(i)); peaks.append(x) }
                quiet = 0
            } else if quiet < Int.max {
                quiet += 1
            }
        }
    }
}

/// Renders `settings` offline for `frames` frames in blocks of `blockSize`, returning the onsets
/// of the left channel and the engine.
func renderOnsets(_ settings: MetronomeSettings, frames: Int, sampleRate: Double = 48000, blockSize: Int = 256,
                  quietGap: Int = 300) throws -> (onsets: [Frame], peaks: [Float], engine: Engine) {
    let program = MetronomeProgram(settings: settings)
    let (engine, feeder) = try program.offline(sampleRate: sampleRate)
    var optional: CommandFeeder? = feeder
    var detector = OnsetDetector(quietGap: quietGap)
    var at: Frame = 0
    OfflineRenderer(engine: engine, sampleRate: sampleRate, blockSize: blockSize).render(frameCount: frames, feeder: &optional) { l, _, n in
        detector.scan(l, count: n, at: at)
        at += Frame(n)
    }
    return (detector.onsets, detector.peaks, engine)
}

func settings(_ words: (inout MetronomeRequest) -> Void) throws -> MetronomeSettings {
    var r = MetronomeRequest()
    words(&r)
    return try r.makeSettings()
}
