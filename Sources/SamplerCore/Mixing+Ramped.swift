extension Mixing {
    /// One source of `addRampedPair` and `addRampedQuad`: its samples (`left == right` for mono),
    /// its gain ramp (frame i gets `origin + step × Float(firstIndex + i)`, as `addRamped`) and
    /// its pan factors.
    struct RampedSource {
        var left: UnsafePointer<Float>
        var right: UnsafePointer<Float>
        var origin: Float
        var step: Float
        var firstIndex: Int
        var panLeft: Float
        var panRight: Float

        @_noLocks @_noAllocation @inline(__always)
        init(left: UnsafePointer<Float>, right: UnsafePointer<Float>, origin: Float, step: Float, firstIndex: Int,
                    panLeft: Float, panRight: Float) {
            self.left = left
            self.right = right
            self.origin = origin
            self.step = step
            self.firstIndex = firstIndex
            self.panLeft = panLeft
            self.panRight = panRight
        }

        /// Whether the ramp indices of a block of `count` frames are counted on in floats
        /// (`isCountedInFloats`: any block a period holds): the grouped kernels take only such sources.
        @_noLocks @_noAllocation @inline(__always)
        func isCounted(_ count: Int) -> Bool { Mixing.isCountedInFloats(firstIndex, count) }
    }

    /// Adds two ramped sources in one pass over the outputs, exactly as `addRamped` for `a` and
    /// then for `b`: every output frame gets `(out + (a × gainA) × panA) + (b × gainB) × panB`,
    /// the same to the bit. Both sources' blocks must be counted in floats (`RampedSource.isCounted`:
    /// the engine's ramped groups check it); otherwise the bits may differ.
    @_noLocks @_noAllocation @inline(__always)
    static func addRampedPair(_ a: RampedSource, _ b: RampedSource,
                                     into outLeft: UnsafeMutablePointer<Float>, right outRight: UnsafeMutablePointer<Float>,
                                     count: Int) {
        var i = 0
        var ka = RampIndices(from: a.firstIndex), kb = RampIndices(from: b.firstIndex)
        while i &+ width <= count {
            let ga = a.origin + a.step * ka.floats, gb = b.origin + b.step * kb.floats
            store(load(outLeft + i) + load(a.left + i) * ga * a.panLeft + load(b.left + i) * gb * b.panLeft, outLeft + i)
            store(load(outRight + i) + load(a.right + i) * ga * a.panRight + load(b.right + i) * gb * b.panRight, outRight + i)
            ka.advance()
            kb.advance()
            i &+= width
        }
        while i < count {
            let ga = a.origin + a.step * Float(a.firstIndex &+ i), gb = b.origin + b.step * Float(b.firstIndex &+ i)
            outLeft[i] = outLeft[i] + a.left[i] * ga * a.panLeft + b.left[i] * gb * b.panLeft
            outRight[i] = outRight[i] + a.right[i] * ga * a.panRight + b.right[i] * gb * b.panRight
            i &+= 1
        }
    }

    /// Adds four ramped sources in one pass over the outputs, exactly as `addRamped` for each in
    /// the order a, b, c, d, the same to the bit. Every source's block must be counted in floats.
    @_noLocks @_noAllocation @inline(__always)
    static func addRampedQuad(_ a: RampedSource, _ b: RampedSource, _ c: RampedSource, _ d: RampedSource,
                                     into outLeft: UnsafeMutablePointer<Float>, right outRight: UnsafeMutablePointer<Float>,
                                     count: Int) {
        var i = 0
        var ka = RampIndices(from: a.firstIndex), kb = RampIndices(from: b.firstIndex)
        var kc = RampIndices(from: c.firstIndex), kd = RampIndices(from: d.firstIndex)
        if a.left == a.right, b.left == b.right, c.left == c.right, d.left == d.right {
            while i &+ width <= count {
                let xa = load(a.left + i) * (a.origin + a.step * ka.floats), xb = load(b.left + i) * (b.origin + b.step * kb.floats)
                let xc = load(c.left + i) * (c.origin + c.step * kc.floats), xd = load(d.left + i) * (d.origin + d.step * kd.floats)
                store(load(outLeft + i) + xa * a.panLeft + xb * b.panLeft + xc * c.panLeft + xd * d.panLeft, outLeft + i)
                store(load(outRight + i) + xa * a.panRight + xb * b.panRight + xc * c.panRight + xd * d.panRight, outRight + i)
                ka.advance()
                kb.advance()
                kc.advance()
                kd.advance()
                i &+= width
            }
        } else {
            while i &+ width <= count {
                let ga = a.origin + a.step * ka.floats, gb = b.origin + b.step * kb.floats
                let gc = c.origin + c.step * kc.floats, gd = d.origin + d.step * kd.floats
                store(load(outLeft + i) + load(a.left + i) * ga * a.panLeft + load(b.left + i) * gb * b.panLeft
                      + load(c.left + i) * gc * c.panLeft + load(d.left + i) * gd * d.panLeft, outLeft + i)
                store(load(outRight + i) + load(a.right + i) * ga * a.panRight + load(b.right + i) * gb * b.panRight
                      + load(c.right + i) * gc * c.panRight + load(d.right + i) * gd * d.panRight, outRight + i)
                ka.advance()
                kb.advance()
                kc.advance()
                kd.advance()
                i &+= width
            }
        }
        while i < count {
            let ga = a.origin + a.step * Float(a.firstIndex &+ i), gb = b.origin + b.step * Float(b.firstIndex &+ i)
            let gc = c.origin + c.step * Float(c.firstIndex &+ i), gd = d.origin + d.step * Float(d.firstIndex &+ i)
            outLeft[i] = outLeft[i] + a.left[i] * ga * a.panLeft + b.left[i] * gb * b.panLeft + c.left[i] * gc * c.panLeft
                + d.left[i] * gd * d.panLeft
            outRight[i] = outRight[i] + a.right[i] * ga * a.panRight + b.right[i] * gb * b.panRight + c.right[i] * gc * c.panRight
                + d.right[i] * gd * d.panRight
            i &+= 1
        }
    }
}
