/// Where the frames of a file fall in a stream that plays it from some position, looping: the
/// arithmetic the disk thread (writing) and the control side (reporting the position) share.
///
/// "Stream frames" count output frames (at the playback rate) from the cue position on, the way
/// the stream's ring counts them. A pass through the file at the playback rate is `frameCount`
/// frames; the k-th wrap (to the file's first frame) is at stream frame `wrapFrame(k)`. When the
/// rates differ the resampler runs without a break across the wraps, so each wrap lands on the
/// output frame nearest to where the file's end falls: passes are `frameCount` frames give or
/// take one, and never drift.
///
/// Plain values; any thread.
package struct StreamTimeline: Equatable, Sendable {
    /// Frames of the file at its own rate.
    package let sourceFrameCount: Int64
    /// Playback rate ÷ file rate.
    package let ratio: Double
    /// One pass at the playback rate: `round(sourceFrameCount × ratio)`, at least 1.
    package let frameCount: Int64
    /// The cue position: an output frame of the file, `0 ..< frameCount`.
    package let startPosition: Int64
    /// The file frame reading starts on (the cue position at the file's rate, rounded).
    package let sourceStart: Int64

    package init(sourceFrameCount: Int64, ratio: Double, startPosition: Int64) {
        precondition(sourceFrameCount > 0 && ratio > 0)
        self.sourceFrameCount = sourceFrameCount
        self.ratio = ratio
        frameCount = Self.frameCount(sourceFrames: sourceFrameCount, ratio: ratio)
        self.startPosition = min(max(0, startPosition), frameCount - 1)
        if ratio == 1 {
            sourceStart = self.startPosition
        } else {
            sourceStart = min(sourceFrameCount - 1, Int64((Double(self.startPosition) / ratio).rounded()))
        }
    }

    /// Frames of one pass at the playback rate.
    package static func frameCount(sourceFrames: Int64, ratio: Double) -> Int64 {
        ratio == 1 ? sourceFrames : max(1, Int64((Double(sourceFrames) * ratio).rounded()))
    }

    /// The stream frame where the k-th wrap (k ≥ 1) happens: the first frame of pass k + 1.
    package func wrapFrame(_ k: Int64) -> Int64 {
        precondition(k >= 1)
        if ratio == 1 { return k * sourceFrameCount - sourceStart }
        let exact = (Double(k) * Double(sourceFrameCount) - Double(sourceStart)) * ratio
        // Strictly increasing even for absurd ratios, and never 0.
        return max(k, Int64(exact.rounded()))
    }

    /// Wraps at or before stream frame `j`: 0 in the first (partial) pass.
    package func wraps(before j: Int64) -> Int64 {
        var k: Int64
        if ratio == 1 {
            k = (j + sourceStart) / sourceFrameCount
        } else {
            k = Int64(((Double(j) / ratio + Double(sourceStart)) / Double(sourceFrameCount)).rounded(.down))
            k = max(0, k)
            while wrapFrame(k + 1) <= j { k += 1 }
            while k > 0 && wrapFrame(k) > j { k -= 1 }
        }
        return max(0, k)
    }

    /// The output frame of the file that stream frame `j` plays.
    package func filePosition(at j: Int64) -> Int64 {
        let k = wraps(before: j)
        let position = k == 0 ? startPosition + j : j - wrapFrame(k)
        return min(max(0, position), frameCount - 1)
    }

    /// Where reading must resume (pass index from 0, and file frame) so that the next frame
    /// written is stream frame `j`: after an underrun, or to restart the resampler.
    package func sourceLocation(at j: Int64) -> (pass: Int64, frame: Int64) {
        if ratio == 1 {
            let t = sourceStart + j
            return (t / sourceFrameCount, t % sourceFrameCount)
        }
        let t = Double(sourceStart) + Double(j) / ratio
        let pass = Int64((t / Double(sourceFrameCount)).rounded(.down))
        let frame = Int64((t - Double(pass) * Double(sourceFrameCount)).rounded(.down))
        return (pass, min(max(0, frame), sourceFrameCount - 1))
    }
}
