/// The inner loops of the mixer, on plain pointers. Real-time safe.
public enum Mixing {
    /// Adds `count` frames of a source (`sourceLeft == sourceRight` for mono) into the outputs at
    /// constant gains.
    @_noLocks @_noAllocation @inline(__always)
    public static func add(left sourceLeft: UnsafePointer<Float>, right sourceRight: UnsafePointer<Float>,
                           into outLeft: UnsafeMutablePointer<Float>, right outRight: UnsafeMutablePointer<Float>,
                           count: Int, gainLeft: Float, gainRight: Float) {
        for i in 0..<count {
            outLeft[i] += sourceLeft[i] * gainLeft
            outRight[i] += sourceRight[i] * gainRight
        }
    }

    /// Adds `count` frames with a gain ramp: frame i gets `origin + step × (firstIndex + i)`,
    /// computed from the index rather than accumulated, so a ramp is the same however the blocks
    /// split it. Returns the level after the last frame.
    @_noLocks @_noAllocation @inline(__always)
    public static func addRamped(left sourceLeft: UnsafePointer<Float>, right sourceRight: UnsafePointer<Float>,
                                 into outLeft: UnsafeMutablePointer<Float>, right outRight: UnsafeMutablePointer<Float>,
                                 count: Int, origin: Float, step: Float, firstIndex: Int,
                                 panLeft: Float, panRight: Float) -> Float {
        for i in 0..<count {
            let g = origin + step * Float(firstIndex + i)
            outLeft[i] += sourceLeft[i] * g * panLeft
            outRight[i] += sourceRight[i] * g * panRight
        }
        return origin + step * Float(firstIndex + count)
    }
}
