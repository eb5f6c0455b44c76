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

/// SplitMix64: a small seeded generator, the same on every machine (the randomized timeline
/// tests).
struct SeededRandom {
    var state: UInt64
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
    mutating func int(_ range: ClosedRange<Int>) -> Int { range.lowerBound + Int(next() % UInt64(range.count)) }
    mutating func chance(_ percent: Int) -> Bool { int(0...99) < percent }
    mutating func pick<T>(_ values: [T]) -> T { values[int(0...(values.count - 1))] }
}
