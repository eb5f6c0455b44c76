import Synchronization

/// The state of a stream ring as the render thread sees it, in memory the `StreamRing` owns.
struct StreamRingState: ~Copyable {
    // Laid out so that everything a short-path block reads and writes (`Engine.plainStreamBlock`)
    // is on the first 64 bytes, one cache line (`StreamRing` aligns the state to 64 bytes): the
    // indices, the marks, the timeline's presence, the capacity and the peak. (Its samples are
    // read through the voice's copies of `left` and `right`.)
    /// Frames ever written (by the disk thread) and ever consumed (by the render thread).
    let writeIndex = Atomic<Int64>(0)
    let readIndex = Atomic<Int64>(0)
    /// The read index at which the stream ends (Int64.max while unknown).
    let endIndex = Atomic<Int64>(.max)
    /// The read index at which the stream wraps to the start of its file (a loop), or -1.
    let wrapIndex = Atomic<Int64>(-1)
    /// The stream's timeline, when its writer publishes one (`StreamRing.setTimeline`): the
    /// frames of one pass of the file at its own rate (0: none published, the marks above are
    /// used), the file frame the stream starts on, the playback ÷ file rate (bits) and the passes
    /// in all (-1: forever). From it the render thread knows where the stream wraps and ends
    /// whether or not the frames have been written: after a lost stretch longer than the ring,
    /// the events are still on their frames.
    let timelineSourceFrames = Atomic<Int64>(0)
    let capacity: Int
    /// The largest |sample| written since the ring was made or reset, as `Sound.peak` measures
    /// it (infinity for NaN, infinities and huge values), in Float bits. Only grows between
    /// resets; stored before the `writeIndex` that publishes the samples, so a reader that loads
    /// it after `writeIndex` gets a bound on every sample below that index.
    let peakBits = Atomic<UInt32>(0)
    let left: UnsafeMutablePointer<Float>
    // The second line.
    let right: UnsafeMutablePointer<Float>
    /// Frames the render thread wanted but the disk thread had not written yet.
    let underrunFrames = Atomic<Int>(0)
    let timelineSourceStart = Atomic<Int64>(0)
    let timelineRatioBits = Atomic<UInt64>(0)
    let timelinePasses = Atomic<Int64>(-1)

    init(left: UnsafeMutablePointer<Float>, right: UnsafeMutablePointer<Float>, capacity: Int) {
        self.left = left
        self.right = right
        self.capacity = capacity
    }
}

extension StreamRingState {
    /// The stream frame of the k-th wrap (k ≥ 1), as `StreamTimeline.wrapFrame` computes it
    /// (rounding half away from zero, at least k). Real-time safe.
    @_noLocks @_noAllocation @inline(__always)
    static func wrapFrame(_ k: Int64, sourceFrames: Int64, sourceStart: Int64, ratio: Double) -> Int64 {
        // Beyond any frame the stream can reach (a loop count of a trillion): never, not a trap.
        if ratio == 1 {
            let (product, overflow) = k.multipliedReportingOverflow(by: sourceFrames)
            if overflow || product > Int64.max / 2 { return .max }
            return product - sourceStart
        }
        let exact = (Double(k) * Double(sourceFrames) - Double(sourceStart)) * ratio
        if !(exact < 4e18) { return .max }
        // Positive: truncation and the exact remainder give the nearest, halves up.
        let whole = Int64(exact)
        let rounded = exact - Double(whole) >= 0.5 ? whole + 1 : whole
        return max(k, rounded)
    }

    /// Wraps before stream frame `j` (≥ 0; one on `j` itself is not counted). Real-time safe.
    @_noLocks @_noAllocation @inline(__always)
    static func wraps(strictlyBefore j: Int64, sourceFrames: Int64, sourceStart: Int64, ratio: Double) -> Int64 {
        j > 0 ? wraps(before: j - 1, sourceFrames: sourceFrames, sourceStart: sourceStart, ratio: ratio) : 0
    }

    /// Wraps at or before stream frame `j` (≥ 0), as `StreamTimeline.wraps(before:)`.
    /// Real-time safe.
    @_noLocks @_noAllocation @inline(__always)
    static func wraps(before j: Int64, sourceFrames: Int64, sourceStart: Int64, ratio: Double) -> Int64 {
        if ratio == 1 { return max(0, (j + sourceStart) / sourceFrames) }
        // The estimate, at most j (every wrap is at least one frame after the last): a pass
        // shorter than a frame would otherwise start the search far above.
        let estimate = (Double(j) / ratio + Double(sourceStart)) / Double(sourceFrames)
        var k = estimate < Double(j) ? max(0, Int64(estimate)) : max(0, j)
        while wrapFrame(k + 1, sourceFrames: sourceFrames, sourceStart: sourceStart, ratio: ratio) <= j { k += 1 }
        while k > 0 && wrapFrame(k, sourceFrames: sourceFrames, sourceStart: sourceStart, ratio: ratio) > j { k -= 1 }
        return k
    }
}

/// A lock-free ring of decoded audio that a disk thread fills and the render thread plays: the
/// memory a streamed sound plays from. Register it with `Engine.register(stream:)` and start it
/// like any sound; its voice plays whatever was written, in order.
///
/// Threads: one writer thread (the disk thread: `write`, `markEnd`, `markWrap`, `skipToRead`) and
/// the render thread (reading). Time never waits for the disk: when data is missing the render
/// thread plays silence, counts the frames as underrun and moves on, and the writer skips ahead
/// (`skipToRead`) so the stream stays in time.
///
/// `@unchecked Sendable` by contract: the properties and `state` are fixed in `init`; samples are
/// written by the one writer thread before it stores `writeIndex` (releasing), and read by the render
/// thread only below the `writeIndex` it loaded (acquiring) — the reverse through `readIndex` before a
/// slot is rewritten; every index is an atomic, and `reset` runs only while no voice plays the ring.
public final class StreamRing: @unchecked Sendable {
    public let capacity: Int
    /// The most frames a ring holds (a voice keeps its offset in 32 bits).
    public static let maximumCapacity = Int(Int32.max)
    public let channelCount: Int
    public let sampleRate: Double
    let state: UnsafeMutablePointer<StreamRingState>
    /// Where the samples live (nil: the heap).
    private let memory: (any SampleMemory)?

    /// A ring of `capacity` frames of `channelCount` (1 or 2) channels, its samples in `memory`
    /// (the heap when nil; the loaders' huge-page memory spares the render thread TLB misses
    /// with many streams, as it does for sounds). Control thread only.
    public init(capacity: Int, channelCount: Int, sampleRate: Double, memory: (any SampleMemory)? = nil) {
        precondition(capacity > 0 && capacity <= StreamRing.maximumCapacity && (channelCount == 1 || channelCount == 2))
        self.capacity = capacity
        self.channelCount = channelCount
        self.sampleRate = sampleRate
        self.memory = memory
        func samples() -> UnsafeMutablePointer<Float> {
            let p = memory?.allocateSamples(capacity) ?? .allocate(capacity: capacity)
            p.initialize(repeating: 0, count: capacity)
            return p
        }
        let left = samples()
        let right = channelCount == 2 ? samples() : left
        // On a cache line of its own: a short-path block reads one (see `StreamRingState`).
        state = UnsafeMutableRawPointer.allocate(byteCount: MemoryLayout<StreamRingState>.stride, alignment: 64)
            .bindMemory(to: StreamRingState.self, capacity: 1)
        state.initialize(to: StreamRingState(left: left, right: right, capacity: capacity))
    }

    deinit {
        func free(_ p: UnsafeMutablePointer<Float>) {
            if let memory { memory.deallocateSamples(p, count: capacity) } else { p.deallocate() }
        }
        if state.pointee.right != state.pointee.left { free(state.pointee.right) }
        free(state.pointee.left)
        state.deinitialize(count: 1)
        UnsafeMutableRawPointer(state).deallocate()
    }

    /// The ring's sample buffers (`left == right` for mono), for a reader outside the engine that
    /// must read the same memory (the benchmark's C reference). Nothing may write them but
    /// `write`; they live as long as the ring.
    public var samples: (left: UnsafePointer<Float>, right: UnsafePointer<Float>) {
        (UnsafePointer(state.pointee.left), UnsafePointer(state.pointee.right))
    }

    /// Frames written so far / consumed so far.
    public var writeIndex: Int64 { state.pointee.writeIndex.load(ordering: .acquiring) }
    public var readIndex: Int64 { state.pointee.readIndex.load(ordering: .acquiring) }
    /// Frames that can be written now without overwriting unread ones.
    public var writableFrames: Int { capacity - Int(writeIndex - readIndex) }
    /// Frames the render thread had to play as silence because they had not arrived.
    public var underrunFrameCount: Int { state.pointee.underrunFrames.load(ordering: .relaxed) }

    /// Appends `count` frames (at most `writableFrames`). Writer thread only.
    public func write(left: UnsafePointer<Float>, right: UnsafePointer<Float>?, count: Int) {
        precondition(count <= writableFrames, "stream ring overflow")
        let w = writeIndex
        // The render thread checks its output for non-finite samples only when the peaks of
        // what it mixed allow one (see `Engine.render`): the peak of what this ring holds.
        var peak = Sound.peak(left, count: count)
        if channelCount == 2, let right { peak = max(peak, Sound.peak(right, count: count)) }
        if peak > Float(bitPattern: state.pointee.peakBits.load(ordering: .relaxed)) {
            state.pointee.peakBits.store(peak.bitPattern, ordering: .relaxed)
        }
        var done = 0
        while done < count {
            let at = Int((w + Int64(done)) % Int64(capacity))
            let n = min(count - done, capacity - at)
            (state.pointee.left + at).update(from: left + done, count: n)
            if channelCount == 2 { (state.pointee.right + at).update(from: (right ?? left) + done, count: n) }
            done += n
        }
        state.pointee.writeIndex.store(w + Int64(count), ordering: .releasing)
    }

    /// After an underrun the reader is ahead of the writer: moves the write index up to the read
    /// index and returns how many frames the writer must skip in its source. Writer thread only.
    public func skipToRead() -> Int64 {
        let r = readIndex, w = writeIndex
        guard r > w else { return 0 }
        state.pointee.writeIndex.store(r, ordering: .releasing)
        return r - w
    }

    /// Says the stream ends after everything written so far. Writer thread only.
    public func markEnd() { state.pointee.endIndex.store(writeIndex, ordering: .releasing) }

    /// Says the stream wraps to its file's start (a loop) after everything written so far, for
    /// the `looped` event. Writer thread only.
    public func markWrap() { state.pointee.wrapIndex.store(writeIndex, ordering: .releasing) }

    /// Publishes the stream's timeline (see `StreamRingState.timelineSourceFrames`): a file of
    /// `sourceFrames` frames at its own rate, played from file frame `sourceStart` at `ratio`
    /// (playback ÷ file rate), `passes` passes in all (nil: forever); the writer's wrap and end
    /// marks then agree with it. With the ring reset, before it plays. Writer thread only.
    public func setTimeline(sourceFrames: Int64, sourceStart: Int64, ratio: Double, passes: Int64?) {
        state.pointee.timelineSourceStart.store(sourceStart, ordering: .relaxed)
        state.pointee.timelineRatioBits.store(ratio.bitPattern, ordering: .relaxed)
        state.pointee.timelinePasses.store(passes ?? -1, ordering: .relaxed)
        state.pointee.timelineSourceFrames.store(max(0, sourceFrames), ordering: .releasing)
    }

    /// Changes the passes of the published timeline (a loop count changed while playing). The
    /// stream cannot end inside a pass already written or read: fewer passes than that are
    /// raised to it (as `StreamReader` asks), so the render thread may keep the next wrap or end
    /// it found (in `Voice.streamLimit`) until it reaches it. Writer thread only.
    public func setTimelinePasses(_ passes: Int64?) {
        var value = passes ?? -1
        let sourceFrames = state.pointee.timelineSourceFrames.load(ordering: .acquiring)
        if value >= 0, sourceFrames > 0 {
            // The pass holding the last frame written or read.
            let started = StreamRingState.wraps(strictlyBefore: max(readIndex, writeIndex), sourceFrames: sourceFrames,
                                                sourceStart: state.pointee.timelineSourceStart.load(ordering: .relaxed),
                                                ratio: Double(bitPattern: state.pointee.timelineRatioBits.load(ordering: .relaxed))) + 1
            value = max(value, started)
        }
        state.pointee.timelinePasses.store(value, ordering: .releasing)
    }

    /// Empties the ring (both indices to 0, no end, no wrap). Only while no voice plays it.
    public func reset() {
        state.pointee.timelineSourceFrames.store(0, ordering: .relaxed)
        state.pointee.readIndex.store(0, ordering: .relaxed)
        state.pointee.writeIndex.store(0, ordering: .relaxed)
        state.pointee.endIndex.store(.max, ordering: .relaxed)
        state.pointee.peakBits.store(0, ordering: .relaxed)
        state.pointee.wrapIndex.store(-1, ordering: .releasing)
    }
}
