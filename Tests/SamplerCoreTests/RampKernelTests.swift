import Testing
@testable import SamplerCore

/// The ramp kernels (`Mixing.addRamped`, `Mixing.addWithRamped`) against the plain per-frame
/// formula, to the bit: frame i of a ramp gets `origin + step × Float(first + i)`, whichever way
/// the kernel forms the index's float (counted on below 2^24, converted from there).
@Suite struct RampKernelTests {
    /// First ramp indices: small, around 2^16 (where the high part steps), around 2^24 (where
    /// floats stop holding every integer), and beyond it up to 2^31.
    static let firstIndices: [Int] = [0, 1, 15, 4_095, 65_535 - 100, 65_536, (1 << 24) - 300, (1 << 24) - 17, (1 << 24) - 16, (1 << 24) - 1, 1 << 24,
                                      (1 << 24) + 3, (1 << 25) + 7, (1 << 28) + 9, (1 << 31) - 400]

    @Test(arguments: firstIndices)
    func addRampedGivesThePerFrameFormula(first: Int) {
        var random = SeededRandom(state: UInt64(first) &+ 99)
        let capacity = 320
        let buffers = (0..<6).map { _ in UnsafeMutablePointer<Float>.allocate(capacity: capacity) }
        defer { buffers.forEach { $0.deallocate() } }
        let sourceLeft = buffers[0], sourceRight = buffers[1], outLeft = buffers[2], outRight = buffers[3]
        let expectLeft = buffers[4], expectRight = buffers[5]
        var mismatches = 0
        for trial in 0..<200 {
            for b in buffers.prefix(4) {
                for i in 0..<capacity { b[i] = Float(random.int(0...2_000_000)) / 1_000_000 - 1 }
            }
            expectLeft.update(from: outLeft, count: capacity)
            expectRight.update(from: outRight, count: capacity)
            let right = trial % 2 == 0 ? sourceLeft : sourceRight
            let count = random.int(0...300)
            let origin = Float(random.int(0...1000)) / 900, step = Float(random.int(-1000...1000)) / 3_000_000_000
            let panLeft = Float(random.int(0...1000)) / 1000, panRight = Float(random.int(0...1000)) / 1000
            let level = Mixing.addRamped(left: sourceLeft, right: right, into: outLeft, right: outRight, count: count,
                                         origin: origin, step: step, firstIndex: first, panLeft: panLeft, panRight: panRight)
            for i in 0..<count {
                let g = origin + step * Float(first + i)
                if trial % 2 == 0 {
                    let x = sourceLeft[i] * g
                    expectLeft[i] += x * panLeft
                    expectRight[i] += x * panRight
                } else {
                    expectLeft[i] += sourceLeft[i] * g * panLeft
                    expectRight[i] += right[i] * g * panRight
                }
            }
            if level.bitPattern != (origin + step * Float(first + count)).bitPattern { mismatches += 1 }
            for i in 0..<capacity where outLeft[i].bitPattern != expectLeft[i].bitPattern || outRight[i].bitPattern != expectRight[i].bitPattern {
                mismatches += 1
            }
        }
        #expect(mismatches == 0)
    }

    @Test(arguments: firstIndices)
    func addWithRampedGivesThePerFrameFormula(first: Int) {
        var random = SeededRandom(state: UInt64(first) &+ 7)
        let capacity = 320
        let buffers = (0..<8).map { _ in UnsafeMutablePointer<Float>.allocate(capacity: capacity) }
        defer { buffers.forEach { $0.deallocate() } }
        let outLeft = buffers[4], outRight = buffers[5], expectLeft = buffers[6], expectRight = buffers[7]
        var mismatches = 0
        for trial in 0..<200 {
            for b in buffers.prefix(6) {
                for i in 0..<capacity { b[i] = Float(random.int(0...2_000_000)) / 1_000_000 - 1 }
            }
            expectLeft.update(from: outLeft, count: capacity)
            expectRight.update(from: outRight, count: capacity)
            let count = random.int(0...300)
            let voiceRight = trial % 2 == 0 ? buffers[0] : buffers[1], tailRight = trial % 3 == 0 ? buffers[2] : buffers[3]
            let voice = Mixing.Source(left: buffers[0], right: voiceRight,
                                      gainLeft: Float(random.int(0...1000)) / 700, gainRight: Float(random.int(0...1000)) / 700)
            let origin = Float(random.int(0...1000)) / 900, step = -Float(random.int(1...1000)) / 3_000_000_000
            let panLeft = Float(random.int(0...1000)) / 1000, panRight = Float(random.int(0...1000)) / 1000
            let level = Mixing.addWithRamped(voice, rampedLeft: buffers[2], right: tailRight, origin: origin, step: step,
                                             firstIndex: first, panLeft: panLeft, panRight: panRight,
                                             into: outLeft, right: outRight, count: count)
            for i in 0..<count {
                let g = origin + step * Float(first + i)
                expectLeft[i] = expectLeft[i] + buffers[0][i] * voice.gainLeft + buffers[2][i] * g * panLeft
                expectRight[i] = expectRight[i] + voiceRight[i] * voice.gainRight + tailRight[i] * g * panRight
            }
            if level.bitPattern != (origin + step * Float(first + count)).bitPattern { mismatches += 1 }
            for i in 0..<capacity where outLeft[i].bitPattern != expectLeft[i].bitPattern || outRight[i].bitPattern != expectRight[i].bitPattern {
                mismatches += 1
            }
        }
        #expect(mismatches == 0)
    }

    /// Two and four ramped sources in one pass (`Mixing.addRampedPair`, `addRampedQuad`) against
    /// `addRamped` for each in turn: random lengths, offsets, ramps and pans, mono and stereo
    /// sources in every combination, to the bit.
    @Test func groupedRampsAddAsOneAfterTheOther() {
        var random = SeededRandom(state: 4242)
        let capacity = 400
        let buffers = (0..<12).map { _ in UnsafeMutablePointer<Float>.allocate(capacity: capacity) }
        defer { buffers.forEach { $0.deallocate() } }
        let expectLeft = buffers[8], expectRight = buffers[9], outLeft = buffers[10], outRight = buffers[11]
        var mismatches = 0
        for trial in 0..<800 {
            for b in buffers.prefix(10) {
                for i in 0..<capacity { b[i] = Float(random.int(0...2_000_000)) / 1_000_000 - 1 }
            }
            outLeft.update(from: expectLeft, count: capacity)
            outRight.update(from: expectRight, count: capacity)
            let count = random.int(0...300), offset = random.int(0...40)
            let allMono = trial % 3 == 0
            let sources = (0..<4).map { k -> Mixing.RampedSource in
                let stereo = !allMono && random.chance(50)
                let first = random.chance(80) ? random.int(0...100_000) : (1 << 24) - count - random.int(0...50)
                return Mixing.RampedSource(left: buffers[2 * k] + offset, right: buffers[2 * k + (stereo ? 1 : 0)] + offset,
                                           origin: Float(random.int(0...1000)) / 900, step: Float(random.int(-1000...1000)) / 3_000_000,
                                           firstIndex: max(0, first), panLeft: Float(random.int(0...1000)) / 1000,
                                           panRight: Float(random.int(0...1000)) / 1000)
            }
            let quad = trial % 2 == 0
            for s in sources.prefix(quad ? 4 : 2) {
                _ = Mixing.addRamped(left: s.left, right: s.right, into: expectLeft + offset, right: expectRight + offset, count: count,
                                     origin: s.origin, step: s.step, firstIndex: s.firstIndex, panLeft: s.panLeft, panRight: s.panRight)
            }
            if quad {
                Mixing.addRampedQuad(sources[0], sources[1], sources[2], sources[3], into: outLeft + offset, right: outRight + offset,
                                     count: count)
            } else {
                Mixing.addRampedPair(sources[0], sources[1], into: outLeft + offset, right: outRight + offset, count: count)
            }
            for i in 0..<capacity where outLeft[i].bitPattern != expectLeft[i].bitPattern || outRight[i].bitPattern != expectRight[i].bitPattern {
                mismatches += 1
            }
        }
        #expect(mismatches == 0)
    }
}
