@testable import SamplerCore

/// Renders `periods` blocks of `blockSize` frames from device frame `start`, returning both channels.
func renderBlocks(_ engine: Engine, periods: Int, blockSize: Int, start: Frame = 0) -> (left: [Float], right: [Float]) {
    var left = [Float](repeating: 0, count: periods * blockSize)
    var right = left
    let l = UnsafeMutablePointer<Float>.allocate(capacity: blockSize)
    let r = UnsafeMutablePointer<Float>.allocate(capacity: blockSize)
    defer { l.deallocate(); r.deallocate() }
    for p in 0..<periods {
        engine.render(frameCount: blockSize, periodStart: start + Frame(p * blockSize), left: l, right: r)
        for i in 0..<blockSize {
            left[p * blockSize + i] = l[i]
            right[p * blockSize + i] = r[i]
        }
    }
    return (left, right)
}

func events(_ engine: Engine) -> [Event] {
    var all: [Event] = []
    engine.drainEvents { all.append($0) }
    return all
}

/// A mono sound whose sample i is (i + 1) / 1000, so every frame is identifiable and non-zero.
func rampSound(frames: Int) throws -> Sound {
    try Sound(channels: [(0..<frames).map { Float($0 + 1) / 1000 }], sampleRate: 48000)
}

func firstNonZero(_ samples: [Float], from: Int = 0) -> Int? {
    samples[from...].firstIndex { $0 != 0 }
}
