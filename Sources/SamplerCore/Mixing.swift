/// The inner loops of the mixer, on plain pointers. Real-time safe.
///
/// Written on SIMD vectors, 16 frames per step, so that they vectorize without the runtime alias
/// checks the compiler would add to plain loops (which it cannot prove free of overlap). The
/// sources and the outputs must not overlap. Mono sources (`sourceLeft == sourceRight`) are read
/// once per frame. Every frame gets exactly the arithmetic of the plain per-frame formula (same
/// operations in the same order, no fused multiply-add), so the output does not depend on the
/// block size or on where a block starts. Indices move with wrapping arithmetic (`&+`): a count
/// is far below `Int.max`, and a checked add would put an overflow branch in every loop.
public enum Mixing {
    /// Adds `count` frames of a source (`sourceLeft == sourceRight` for mono) into the outputs at
    /// constant gains: `out[i] += source[i] × gain`.
    @_noLocks @_noAllocation @inline(__always)
    public static func add(left sourceLeft: UnsafePointer<Float>, right sourceRight: UnsafePointer<Float>,
                           into outLeft: UnsafeMutablePointer<Float>, right outRight: UnsafeMutablePointer<Float>,
                           count: Int, gainLeft: Float, gainRight: Float) {
        if sourceLeft == sourceRight {
            addMono(sourceLeft, into: outLeft, outRight, count: count, gainLeft: gainLeft, gainRight: gainRight)
        } else {
            addStereo(sourceLeft, sourceRight, into: outLeft, outRight, count: count, gainLeft: gainLeft, gainRight: gainRight)
        }
    }

    /// Adds two sources in one pass over the outputs, exactly as `add` for the first and then
    /// `add` for the second would: every output frame gets `(out + a × gainA) + b × gainB`, in
    /// that order, so the result is the same to the bit. Half the output loads and stores of two
    /// calls: with many plain voices the stores bound the mixer.
    @_noLocks @_noAllocation @inline(__always)
    public static func addPair(_ a: Source, _ b: Source,
                               into outLeft: UnsafeMutablePointer<Float>, right outRight: UnsafeMutablePointer<Float>, count: Int) {
        if a.left == a.right, b.left == b.right {
            addMonoPair(a.left, a.gainLeft, a.gainRight, b.left, b.gainLeft, b.gainRight, into: outLeft, outRight, count: count)
        } else {
            addPairOfAny(a.left, a.right, a.gainLeft, a.gainRight, b.left, b.right, b.gainLeft, b.gainRight,
                         into: outLeft, outRight, count: count)
        }
    }

    /// One source of `addPair` and `addQuad`: its samples (`left == right` for mono) and gains.
    public struct Source {
        public var left: UnsafePointer<Float>
        public var right: UnsafePointer<Float>
        public var gainLeft: Float
        public var gainRight: Float

        @_noLocks @_noAllocation @inline(__always)
        public init(left: UnsafePointer<Float>, right: UnsafePointer<Float>, gainLeft: Float, gainRight: Float) {
            self.left = left
            self.right = right
            self.gainLeft = gainLeft
            self.gainRight = gainRight
        }
    }

    /// Adds four sources in one pass over the outputs, exactly as four `add` calls in the order
    /// a, b, c, d: every output frame gets `(((out + a) + b) + c) + d`, the same to the bit.
    @_noLocks @_noAllocation @inline(__always)
    public static func addQuad(_ a: Source, _ b: Source, _ c: Source, _ d: Source,
                               into outLeft: UnsafeMutablePointer<Float>, right outRight: UnsafeMutablePointer<Float>, count: Int) {
        if a.left == a.right, b.left == b.right, c.left == c.right, d.left == d.right {
            var i = 0
            while i &+ width <= count {
                let xa = load(a.left + i), xb = load(b.left + i)
                let xc = load(c.left + i), xd = load(d.left + i)
                store(load(outLeft + i) + xa * a.gainLeft + xb * b.gainLeft + xc * c.gainLeft + xd * d.gainLeft, outLeft + i)
                store(load(outRight + i) + xa * a.gainRight + xb * b.gainRight + xc * c.gainRight + xd * d.gainRight, outRight + i)
                i &+= width
            }
            while i < count {
                let xa = a.left[i], xb = b.left[i], xc = c.left[i], xd = d.left[i]
                outLeft[i] = outLeft[i] + xa * a.gainLeft + xb * b.gainLeft + xc * c.gainLeft + xd * d.gainLeft
                outRight[i] = outRight[i] + xa * a.gainRight + xb * b.gainRight + xc * c.gainRight + xd * d.gainRight
                i &+= 1
            }
        } else {
            var i = 0
            while i &+ width <= count {
                store(load(outLeft + i) + load(a.left + i) * a.gainLeft + load(b.left + i) * b.gainLeft
                      + load(c.left + i) * c.gainLeft + load(d.left + i) * d.gainLeft, outLeft + i)
                store(load(outRight + i) + load(a.right + i) * a.gainRight + load(b.right + i) * b.gainRight
                      + load(c.right + i) * c.gainRight + load(d.right + i) * d.gainRight, outRight + i)
                i &+= width
            }
            while i < count {
                outLeft[i] = outLeft[i] + a.left[i] * a.gainLeft + b.left[i] * b.gainLeft + c.left[i] * c.gainLeft
                    + d.left[i] * d.gainLeft
                outRight[i] = outRight[i] + a.right[i] * a.gainRight + b.right[i] * b.gainRight + c.right[i] * c.gainRight
                    + d.right[i] * d.gainRight
                i &+= 1
            }
        }
    }

    /// Adds a plain source and then a ramped one in one pass over the outputs, exactly as `add`
    /// for `a` and then `addRamped` for the second would: every output frame gets
    /// `(out + a × gain) + (b × ramp) × pan`, the same to the bit, with half the output loads and
    /// stores (a voice and its declick tail). Returns the ramp's level after the last frame.
    @_noLocks @_noAllocation @inline(__always)
    public static func addWithRamped(_ a: Source, rampedLeft bLeft: UnsafePointer<Float>, right bRight: UnsafePointer<Float>,
                                     origin: Float, step: Float, firstIndex: Int, panLeft: Float, panRight: Float,
                                     into outLeft: UnsafeMutablePointer<Float>, right outRight: UnsafeMutablePointer<Float>,
                                     count: Int) -> Float {
        var i = 0
        if isCountedInFloats(firstIndex, count), a.left == a.right, bLeft == bRight {
            // Both mono: each source read once per frame.
            var k = RampIndices(from: firstIndex)
            while i &+ width <= count {
                let xa = load(a.left + i), xb = load(bLeft + i) * (origin + step * k.floats)
                store(load(outLeft + i) + xa * a.gainLeft + xb * panLeft, outLeft + i)
                store(load(outRight + i) + xa * a.gainRight + xb * panRight, outRight + i)
                k.advance()
                i &+= width
            }
        } else if isCountedInFloats(firstIndex, count) {
            var k = RampIndices(from: firstIndex)
            while i &+ width <= count {
                let g = origin + step * k.floats
                store(load(outLeft + i) + load(a.left + i) * a.gainLeft + load(bLeft + i) * g * panLeft, outLeft + i)
                store(load(outRight + i) + load(a.right + i) * a.gainRight + load(bRight + i) * g * panRight, outRight + i)
                k.advance()
                i &+= width
            }
        } else {
            while i &+ width <= count {
                let g = rampGains(origin: origin, step: step, index: firstIndex &+ i)
                store(load(outLeft + i) + load(a.left + i) * a.gainLeft + load(bLeft + i) * g * panLeft, outLeft + i)
                store(load(outRight + i) + load(a.right + i) * a.gainRight + load(bRight + i) * g * panRight, outRight + i)
                i &+= width
            }
        }
        while i < count {
            let g = origin + step * Float(firstIndex &+ i)
            outLeft[i] = outLeft[i] + a.left[i] * a.gainLeft + bLeft[i] * g * panLeft
            outRight[i] = outRight[i] + a.right[i] * a.gainRight + bRight[i] * g * panRight
            i &+= 1
        }
        return origin + step * Float(firstIndex + count)
    }

    /// Adds `count` frames with a gain ramp: frame i gets `origin + step × (firstIndex + i)`,
    /// computed from the index rather than accumulated, so a ramp is the same however the blocks
    /// split it. Returns the level after the last frame.
    @_noLocks @_noAllocation @inline(__always)
    public static func addRamped(left sourceLeft: UnsafePointer<Float>, right sourceRight: UnsafePointer<Float>,
                                 into outLeft: UnsafeMutablePointer<Float>, right outRight: UnsafeMutablePointer<Float>,
                                 count: Int, origin: Float, step: Float, firstIndex: Int,
                                 panLeft: Float, panRight: Float) -> Float {
        if sourceLeft == sourceRight {
            addMonoRamped(sourceLeft, into: outLeft, outRight, count: count, origin: origin, step: step,
                          firstIndex: firstIndex, panLeft: panLeft, panRight: panRight)
        } else {
            addStereoRamped(sourceLeft, sourceRight, into: outLeft, outRight, count: count, origin: origin, step: step,
                            firstIndex: firstIndex, panLeft: panLeft, panRight: panRight)
        }
        return origin + step * Float(firstIndex + count)
    }

    // MARK: Kernels

    /// Frames per vector step: one 64-byte cache line of a mono source.
    typealias Vector = SIMD16<Float>
    static var width: Int { @_noLocks @_noAllocation @inline(__always) get { 16 } }

    @_noLocks @_noAllocation @inline(__always)
    static func load(_ p: UnsafePointer<Float>) -> Vector {
        UnsafeRawPointer(p).loadUnaligned(as: Vector.self)
    }

    @_noLocks @_noAllocation @inline(__always)
    static func store(_ v: Vector, _ p: UnsafeMutablePointer<Float>) {
        UnsafeMutableRawPointer(p).storeBytes(of: v, as: Vector.self)
    }

    @_noLocks @_noAllocation @inline(__always)
    static func addMono(_ source: UnsafePointer<Float>, into outLeft: UnsafeMutablePointer<Float>,
                        _ outRight: UnsafeMutablePointer<Float>, count: Int, gainLeft: Float, gainRight: Float) {
        var i = 0
        while i &+ width <= count {
            let x = load(source + i)
            store(load(outLeft + i) + x * gainLeft, outLeft + i)
            store(load(outRight + i) + x * gainRight, outRight + i)
            i &+= width
        }
        while i < count {
            let x = source[i]
            outLeft[i] += x * gainLeft
            outRight[i] += x * gainRight
            i &+= 1
        }
    }

    @_noLocks @_noAllocation @inline(__always)
    static func addStereo(_ sourceLeft: UnsafePointer<Float>, _ sourceRight: UnsafePointer<Float>,
                          into outLeft: UnsafeMutablePointer<Float>, _ outRight: UnsafeMutablePointer<Float>,
                          count: Int, gainLeft: Float, gainRight: Float) {
        var i = 0
        while i &+ width <= count {
            store(load(outLeft + i) + load(sourceLeft + i) * gainLeft, outLeft + i)
            store(load(outRight + i) + load(sourceRight + i) * gainRight, outRight + i)
            i &+= width
        }
        while i < count {
            outLeft[i] += sourceLeft[i] * gainLeft
            outRight[i] += sourceRight[i] * gainRight
            i &+= 1
        }
    }

    @_noLocks @_noAllocation @inline(__always)
    static func addMonoPair(_ a: UnsafePointer<Float>, _ aGainLeft: Float, _ aGainRight: Float,
                            _ b: UnsafePointer<Float>, _ bGainLeft: Float, _ bGainRight: Float,
                            into outLeft: UnsafeMutablePointer<Float>, _ outRight: UnsafeMutablePointer<Float>, count: Int) {
        var i = 0
        while i &+ width <= count {
            let x = load(a + i), y = load(b + i)
            store(load(outLeft + i) + x * aGainLeft + y * bGainLeft, outLeft + i)
            store(load(outRight + i) + x * aGainRight + y * bGainRight, outRight + i)
            i &+= width
        }
        while i < count {
            let x = a[i], y = b[i]
            outLeft[i] = outLeft[i] + x * aGainLeft + y * bGainLeft
            outRight[i] = outRight[i] + x * aGainRight + y * bGainRight
            i &+= 1
        }
    }

    /// `addPair` when either source is stereo (a mono one is read through both pointers).
    @_noLocks @_noAllocation @inline(__always)
    static func addPairOfAny(_ aLeft: UnsafePointer<Float>, _ aRight: UnsafePointer<Float>, _ aGainLeft: Float, _ aGainRight: Float,
                             _ bLeft: UnsafePointer<Float>, _ bRight: UnsafePointer<Float>, _ bGainLeft: Float, _ bGainRight: Float,
                             into outLeft: UnsafeMutablePointer<Float>, _ outRight: UnsafeMutablePointer<Float>, count: Int) {
        var i = 0
        while i &+ width <= count {
            store(load(outLeft + i) + load(aLeft + i) * aGainLeft + load(bLeft + i) * bGainLeft, outLeft + i)
            store(load(outRight + i) + load(aRight + i) * aGainRight + load(bRight + i) * bGainRight, outRight + i)
            i &+= width
        }
        while i < count {
            outLeft[i] = outLeft[i] + aLeft[i] * aGainLeft + bLeft[i] * bGainLeft
            outRight[i] = outRight[i] + aRight[i] * aGainRight + bRight[i] * bGainRight
            i &+= 1
        }
    }

    /// The ramp gains of frames `index ..< index + width`: `origin + step × Float(k)` per frame.
    @_noLocks @_noAllocation @inline(__always)
    static func rampGains(origin: Float, step: Float, index: Int) -> Vector {
        origin + step * floats(from: index)
    }

    /// Whether the kernels count a block's ramp indices, `first ..< first + count`, on in floats
    /// (`RampIndices`): every block a period can hold (up to 2^24 − 2^16 frames), with indices
    /// below 2^32. Otherwise each step converts its indices (`floats(from:)`).
    @_noLocks @_noAllocation @inline(__always)
    static func isCountedInFloats(_ first: Int, _ count: Int) -> Bool {
        first >= 0 && count <= (1 << 24) - (1 << 16) && first &+ count <= 1 << 32
    }

    /// A block's ramp indices as floats, `Float(k)` for the k of each vector step, counted on
    /// rather than converted: k = high + low, where `high` is the first index with its low 16
    /// bits cleared (a float exactly: at most 16 significant bits) and `low` the rest, below
    /// 2^24 for the whole block (so a float exactly, and one add moves it on by a step). Their
    /// sum is rounded once, as the conversion of k is: the same bits (`isCountedInFloats`).
    struct RampIndices {
        var low: Vector
        let high: Vector

        @_noLocks @_noAllocation @inline(__always)
        init(from first: Int) {
            let high = first & ~0xFFFF
            low = Vector(repeating: Float(first &- high)) + Vector(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15)
            self.high = Vector(repeating: Float(high))
        }

        /// `Float(k)` for this step's indices.
        var floats: Vector {
            @_noLocks @_noAllocation @inline(__always) get { high + low }
        }

        /// On to the next step's indices.
        @_noLocks @_noAllocation @inline(__always)
        mutating func advance() { low += Vector(repeating: Float(Mixing.width)) }
    }

    /// `Float(k)` for k in `first ..< first + width` (0 ≤ k < 2^32), exactly as the scalar
    /// conversion rounds, on vectors: each k is split into 16-bit halves, each half becomes a float
    /// exactly (placed in the mantissa of 2^23 and 2^23 subtracted), and their sum is rounded once,
    /// which is how a compiler converts unsigned integers. (The stdlib's generic vector conversion
    /// is not inlined here, and SSE2 has no 64-bit integer conversion.)
    @_noLocks @_noAllocation @inline(__always)
    static func floats(from first: Int) -> Vector {
        let k = SIMD16<UInt32>(repeating: UInt32(truncatingIfNeeded: first))
            &+ SIMD16<UInt32>(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15)
        let twoTo23Bits: UInt32 = 0x4B00_0000
        let low = unsafeBitCast((k & 0xFFFF) | twoTo23Bits, to: Vector.self) - 8_388_608
        let high = unsafeBitCast((k &>> 16) | twoTo23Bits, to: Vector.self) - 8_388_608
        return high * 65_536 + low
    }

    @_noLocks @_noAllocation @inline(__always)
    static func addMonoRamped(_ source: UnsafePointer<Float>, into outLeft: UnsafeMutablePointer<Float>,
                              _ outRight: UnsafeMutablePointer<Float>, count: Int, origin: Float, step: Float,
                              firstIndex: Int, panLeft: Float, panRight: Float) {
        var i = 0
        if isCountedInFloats(firstIndex, count) {
            var k = RampIndices(from: firstIndex)
            while i &+ width <= count {
                let x = load(source + i) * (origin + step * k.floats)
                store(load(outLeft + i) + x * panLeft, outLeft + i)
                store(load(outRight + i) + x * panRight, outRight + i)
                k.advance()
                i &+= width
            }
        } else {
            while i &+ width <= count {
                let x = load(source + i) * rampGains(origin: origin, step: step, index: firstIndex + i)
                store(load(outLeft + i) + x * panLeft, outLeft + i)
                store(load(outRight + i) + x * panRight, outRight + i)
                i &+= width
            }
        }
        while i < count {
            let x = source[i] * (origin + step * Float(firstIndex + i))
            outLeft[i] += x * panLeft
            outRight[i] += x * panRight
            i &+= 1
        }
    }

    @_noLocks @_noAllocation @inline(__always)
    static func addStereoRamped(_ sourceLeft: UnsafePointer<Float>, _ sourceRight: UnsafePointer<Float>,
                                into outLeft: UnsafeMutablePointer<Float>, _ outRight: UnsafeMutablePointer<Float>,
                                count: Int, origin: Float, step: Float, firstIndex: Int,
                                panLeft: Float, panRight: Float) {
        var i = 0
        if isCountedInFloats(firstIndex, count) {
            var k = RampIndices(from: firstIndex)
            while i &+ width <= count {
                let g = origin + step * k.floats
                store(load(outLeft + i) + load(sourceLeft + i) * g * panLeft, outLeft + i)
                store(load(outRight + i) + load(sourceRight + i) * g * panRight, outRight + i)
                k.advance()
                i &+= width
            }
        } else {
            while i &+ width <= count {
                let g = rampGains(origin: origin, step: step, index: firstIndex + i)
                store(load(outLeft + i) + load(sourceLeft + i) * g * panLeft, outLeft + i)
                store(load(outRight + i) + load(sourceRight + i) * g * panRight, outRight + i)
                i &+= width
            }
        }
        while i < count {
            let g = origin + step * Float(firstIndex + i)
            outLeft[i] += sourceLeft[i] * g * panLeft
            outRight[i] += sourceRight[i] * g * panRight
            i &+= 1
        }
    }
}

extension Mixing {
    /// Writes `count` zeros from `buffer` (inlined vector stores: a period's buffer is small
    /// enough that a call to `memset` costs as much as the stores). Real-time safe.
    @_noLocks @_noAllocation @inline(__always)
    static func clear(_ buffer: UnsafeMutablePointer<Float>, count: Int) {
        let zero = Vector(repeating: 0)
        var i = 0
        while i &+ width <= count {
            store(zero, buffer + i)
            i = i &+ width
        }
        while i < count {
            buffer[i] = 0
            i = i &+ 1
        }
    }

    /// Replaces every non-finite sample of `left[0 ..< count]` and `right[0 ..< count]` by 0;
    /// returns how many there were. Real-time safe.
    @_noLocks @_noAllocation
    static func replaceNonFinite(_ left: UnsafeMutablePointer<Float>, _ right: UnsafeMutablePointer<Float>, count: Int) -> Int {
        // x − x is 0 for every finite x and NaN for NaN and ±inf: summed over both buffers, 16
        // samples per step (float vectors, no branch), it is 0 unless a sample is not finite.
        // (On 8-lane vectors, two sums apart: one AVX register each, no dependency between them.)
        var a = SIMD8<Float>(repeating: 0), b = SIMD8<Float>(repeating: 0)
        var i = 0
        while i &+ 16 <= count {
            let l0 = UnsafeRawPointer(left + i).loadUnaligned(as: SIMD8<Float>.self)
            let l1 = UnsafeRawPointer(left + i + 8).loadUnaligned(as: SIMD8<Float>.self)
            let r0 = UnsafeRawPointer(right + i).loadUnaligned(as: SIMD8<Float>.self)
            let r1 = UnsafeRawPointer(right + i + 8).loadUnaligned(as: SIMD8<Float>.self)
            a += (l0 - l0) + (r0 - r0)
            b += (l1 - l1) + (r1 - r1)
            i = i &+ 16
        }
        var rest: Float = 0
        while i < count {
            rest += (left[i] - left[i]) + (right[i] - right[i])
            i = i &+ 1
        }
        // A vector compare, not a sum across the lanes (a chain of dependent adds).
        if rest == 0, !any((a + b) .!= SIMD8<Float>(repeating: 0)) { return 0 }
        return replaceEach(left, count: count) + replaceEach(right, count: count)
    }

    /// Replaces every non-finite sample of `buffer[0 ..< count]` by 0 (bit test: NaN and ±inf
    /// have an all-ones exponent); returns how many there were.
    @_noLocks @_noAllocation
    private static func replaceEach(_ buffer: UnsafeMutablePointer<Float>, count: Int) -> Int {
        var found = 0
        for i in 0..<count where buffer[i].bitPattern & 0x7F80_0000 == 0x7F80_0000 {
            buffer[i] = 0
            found += 1
        }
        return found
    }
}
