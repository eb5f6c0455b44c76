@testable import JACKBackend
import Locking
import Testing

/// `--record` is the device timeline from its first frame (issue 34): frames the device
/// skipped are silence in the file, frames asked for again are written once.
@Suite struct RecordTapTests {
    @Test func skippedFramesAreSilenceAndRepeatedOnesAreWrittenOnce() {
        let tap = RecordTap(capacity: 1024, maxGap: 100_000)
        let written = Locked<[Float]>([])
        tap.start { left, _ in written.withLock { $0 += left } }
        /// A period of 4 frames whose samples are their device frames (+1, so none is 0).
        func period(_ start: Int64) {
            let samples = (0..<4).map { Float(start + Int64($0) + 1) }
            samples.withUnsafeBufferPointer { tap.write(left: $0.baseAddress!, right: $0.baseAddress!, count: 4, periodStart: start) }
        }
        period(100)
        period(104)
        period(116)  // 108 ..< 116 skipped
        period(118)  // 118, 119 asked for again
        period(122)
        period(10_000_000)  // a new clock: no gap
        tap.stop()
        let expected: [Float] = (100..<108).map { Float($0 + 1) } + [Float](repeating: 0, count: 8)
            + (116..<126).map { Float($0 + 1) } + (10_000_000..<10_000_004).map { Float($0 + 1) }
        #expect(written.withLock { $0 } == expected)
        #expect(tap.gapFrameCount == 8 && tap.droppedFrameCount == 0)
    }
}
