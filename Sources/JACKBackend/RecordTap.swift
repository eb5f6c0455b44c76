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
/// `@unchecked Sendable` by contract: `ring` is SPSC (the process thread pushes in `write`, the
/// writer thread pops); `droppedFrames` and `stopping` are atomics; `thread` is touched only by
/// `start` and `stop`, on one control thread.
package final class RecordTap: @unchecked Sendable {
    let ring: SPSCRing<StereoFrame>
    let droppedFrames = Atomic<Int>(0)
    private let stopping = Atomic<Bool>(false)
    private var thread: Thread?
    private let finished = DispatchSemaphore(value: 0)

    /// A tap buffering up to `capacity` frames (default: 4 s at 48 kHz). Control thread only.
    package init(capacity: Int = 48_000 * 4) {
        ring = SPSCRing(capacity: capacity)
    }

    /// Frames lost because the writer fell behind.
    package var droppedFrameCount: Int { droppedFrames.load(ordering: .relaxed) }

    /// Copies `count` frames into the ring. Real-time safe.
    @_noLocks @_noAllocation
    package func write(left: UnsafePointer<Float>, right: UnsafePointer<Float>, count: Int) {
        let written = ring.push(count: count) { StereoFrame(left: left[$0], right: right[$0]) }
        if written < count { droppedFrames.add(count - written, ordering: .relaxed) }
    }

    /// Starts the writer thread, which calls `sink` with batches of frames until `stop()`.
    /// Control thread only.
    package func start(sink: @escaping @Sendable (_ left: [Float], _ right: [Float]) -> Void) {
        let t = Thread { [self] in
            var left = [Float](repeating: 0, count: 4096), right = left
            while true {
                let done = stopping.load(ordering: .acquiring)
                let n = ring.pop(upTo: 4096) { i, frame in left[i] = frame.left; right[i] = frame.right }
                if n > 0 { sink(Array(left[0..<n]), Array(right[0..<n])) }
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
