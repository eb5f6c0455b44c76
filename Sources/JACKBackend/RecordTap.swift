import Foundation
import Synchronization
import LockFree
import SamplerCore

/// One stereo frame, as carried from the render thread to a recorder.
package struct StereoFrame: BitwiseCopyable, Sendable {
    package var left: Float
    package var right: Float
}

/// Carries what the engine played from the real-time thread to a writer thread through a
/// lock-free ring; the writer thread hands the frames to `sink` (e.g. a WAV file writer).
/// The real-time side never blocks: when the ring is full the frames are dropped and counted.
///
/// What reaches the sink is the device timeline from the first recorded frame: frames the
/// device skipped are written as silence (a gap, as the engine renders it, never a shift of
/// what follows), frames asked for again are written once. The gap travels through the ring as
/// one marker frame, not as that many zeros.
///
/// `@unchecked Sendable` by contract: `ring` is SPSC (the process thread pushes in `write`, the
/// writer thread pops); `droppedFrames` and `stopping` are atomics; `thread` is touched only by
/// `start` and `stop`, on one control thread.
package final class RecordTap: @unchecked Sendable {
    let ring: SPSCRing<StereoFrame>
    let droppedFrames = Atomic<Int>(0)
    let gapFrames = Atomic<Int>(0)
    private let stopping = Atomic<Bool>(false)
    /// The device frame after the last one recorded; render thread only.
    private var nextFrame: Frame = 0
    private var started = false
    /// A jump of more than this is a new clock (the engine's `maxCatchUpFrames`): no gap.
    private let maxGap: Int64
    private var thread: Thread?
    private let finished = DispatchSemaphore(value: 0)

    /// A tap buffering up to `capacity` frames (default: 4 s at 48 kHz). Control thread only.
    package init(capacity: Int = 48_000 * 4, maxGap: Int = EngineConfiguration().maxCatchUpFrames) {
        ring = SPSCRing(capacity: capacity)
        self.maxGap = Int64(maxGap)
    }

    /// Frames written as silence because the device skipped them.
    package var gapFrameCount: Int { gapFrames.load(ordering: .relaxed) }

    /// Frames lost because the writer fell behind.
    package var droppedFrameCount: Int { droppedFrames.load(ordering: .relaxed) }

    /// Copies the `count` frames of the period that begins on device frame `periodStart` into
    /// the ring, after a gap marker when frames were skipped since the last period, without the
    /// frames already recorded when some are asked for again. Real-time safe.
    @_noLocks @_noAllocation
    package func write(left: UnsafePointer<Float>, right: UnsafePointer<Float>, count: Int, periodStart: Frame) {
        var skip = 0
        // A local: `||`'s autoclosure would capture (and retain) self.
        let limit = maxGap
        if started {
            let gap = periodStart - nextFrame
            if gap > limit || gap < -limit {
                // A new clock: the recording goes on from here.
            } else if gap > 0 {
                let marker = StereoFrame(left: .nan, right: Float(bitPattern: UInt32(truncatingIfNeeded: gap)))
                if ring.push(count: 1, { _ in marker }) == 1 {
                    gapFrames.add(Int(gap), ordering: .relaxed)
                } else {
                    droppedFrames.add(Int(gap), ordering: .relaxed)
                }
            } else if gap < 0 {
                skip = Int(min(-gap, Int64(count)))
            }
        }
        started = true
        nextFrame = max(nextFrame, periodStart + Int64(count))
        if nextFrame - (periodStart + Int64(count)) > limit { nextFrame = periodStart + Int64(count) }
        guard skip < count else { return }
        let n = count - skip
        let written = ring.push(count: n) { StereoFrame(left: left[skip + $0], right: right[skip + $0]) }
        if written < n { droppedFrames.add(n - written, ordering: .relaxed) }
    }

    /// A marker's gap length (frames of silence), or nil for a frame of sound.
    static func gap(_ frame: StereoFrame) -> Int? {
        frame.left.isNaN ? Int(frame.right.bitPattern) : nil
    }

    /// Starts the writer thread, which calls `sink` with batches of frames until `stop()`.
    /// Control thread only.
    package func start(sink: @escaping @Sendable (_ left: [Float], _ right: [Float]) -> Void) {
        let t = Thread { [self] in
            var left = [Float](repeating: 0, count: 4096), right = left
            while true {
                let done = stopping.load(ordering: .acquiring)
                var gaps: [(at: Int, frames: Int)] = []
                let n = ring.pop(upTo: 4096) { i, frame in
                    if let gap = RecordTap.gap(frame) { gaps.append((i, gap)) } else { left[i] = frame.left; right[i] = frame.right }
                }
                // Sound up to each marker, then its silence.
                var from = 0
                for gap in gaps {
                    if gap.at > from { sink(Array(left[from..<gap.at]), Array(right[from..<gap.at])) }
                    var rest = gap.frames
                    while rest > 0 {
                        let m = min(rest, 65_536)
                        sink([Float](repeating: 0, count: m), [Float](repeating: 0, count: m))
                        rest -= m
                    }
                    from = gap.at + 1
                }
                if n > from { sink(Array(left[from..<n]), Array(right[from..<n])) }
                if n == 0 {
                    if done { break }
                    usleep(5_000)  // nothing buffered: poll again after a few milliseconds
                }
            }
            finished.signal()
        }
        thread = t
        t.start()
    }

    /// Drains what is buffered, then stops the writer thread. Control thread only.
    package func stop() {
        guard thread != nil else { return }
        stopping.store(true, ordering: .releasing)
        finished.wait()
        thread = nil
    }
}
