import SamplerCore

/// The kernels must give, bit for bit, the plain per-frame formula (any vectorization or
/// reordering that changed a sample would show here): random sources, gains, lengths, output
/// offsets and ramp indices (up to 2^31), mono and stereo. Returns the number of mismatching
/// samples.
func checkKernelsAgainstFormula() -> Int {
    let capacity = 700
    let sourceLeft = UnsafeMutablePointer<Float>.allocate(capacity: capacity)
    let sourceRight = UnsafeMutablePointer<Float>.allocate(capacity: capacity)
    let outLeft = UnsafeMutablePointer<Float>.allocate(capacity: capacity), outRight = UnsafeMutablePointer<Float>.allocate(capacity: capacity)
    let expectLeft = UnsafeMutablePointer<Float>.allocate(capacity: capacity), expectRight = UnsafeMutablePointer<Float>.allocate(capacity: capacity)
    defer { for p in [sourceLeft, sourceRight, outLeft, outRight, expectLeft, expectRight] { p.deallocate() } }
    var random = SplitMix(state: 2024)
    var mismatches = 0
    for trial in 0..<4000 {
        for i in 0..<capacity {
            sourceLeft[i] = random.unit() * 2 - 1
            sourceRight[i] = random.unit() * 2 - 1
            outLeft[i] = random.unit() - 0.5
            outRight[i] = random.unit() - 0.5
        }
        expectLeft.update(from: outLeft, count: capacity)
        expectRight.update(from: outRight, count: capacity)
        let mono = trial % 2 == 0
        let right = mono ? sourceLeft : sourceRight
        let count = Int(random.next() % 300)
        let offset = Int(random.next() % 37), sourceOffset = Int(random.next() % 41)
        let gl = random.unit(), gr = random.unit()
        if trial % 4 < 2 {
            Mixing.add(left: sourceLeft + sourceOffset, right: right + sourceOffset, into: outLeft + offset, right: outRight + offset,
                       count: count, gainLeft: gl, gainRight: gr)
            for i in 0..<count {
                expectLeft[offset + i] += sourceLeft[sourceOffset + i] * gl
                expectRight[offset + i] += right[sourceOffset + i] * gr
            }
        } else {
            let origin = random.unit(), step = (random.unit() - 0.5) * 1e-3
            let first = trial % 8 < 6 ? Int(random.next() % 100_000) : Int(random.next() % (1 << 31 - 400))
            let level = Mixing.addRamped(left: sourceLeft + sourceOffset, right: right + sourceOffset, into: outLeft + offset,
                                         right: outRight + offset, count: count, origin: origin, step: step, firstIndex: first,
                                         panLeft: gl, panRight: gr)
            for i in 0..<count {
                let g = origin + step * Float(first + i)
                expectLeft[offset + i] += sourceLeft[sourceOffset + i] * g * gl
                expectRight[offset + i] += right[sourceOffset + i] * g * gr
            }
            if level != origin + step * Float(first + count) { mismatches += 1 }
        }
        for i in 0..<capacity where outLeft[i].bitPattern != expectLeft[i].bitPattern || outRight[i].bitPattern != expectRight[i].bitPattern {
            mismatches += 1
        }
    }
    return mismatches
}
