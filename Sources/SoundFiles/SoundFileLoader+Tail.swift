import CSndFile
import Foundation

extension SoundFileLoader {
    /// Decodes the sound file at `path` as `load` does and writes its frames from `start` on into
    /// `left`, and `right` for a stereo file (`TailReader` read to the end). Returns the whole
    /// sound's peak (as `Sound.peak`), or nil when the file no longer decodes to `frames` frames of
    /// `channelCount` channels (it changed since the load). Control thread only.
    package func readTail(
        path: String, root: String? = nil, frames: Int, from start: Int, channelCount: Int,
        left: UnsafeMutablePointer<Float>, right: UnsafeMutablePointer<Float>?
    ) throws(SoundFileError) -> Float? {
        guard let reader = try TailReader(loader: self, path: path, root: root, frames: frames, from: start, channelCount: channelCount,
                                          left: left, right: right) else { return nil }
        guard reader.read(upTo: frames - start), reader.written == frames - start else { return nil }
        return reader.peak
    }
}

/// The tail of a sound streamed per voice, decoded as `SoundFileLoader.load` decodes the whole
/// file (the same bits: a converter fed chunk by chunk gives a whole conversion's frames, see
/// `Resampler.Stream`) and written into a voice's buffer as far as it is asked, never holding the
/// whole sound: frames `start ..< frames` of the sound, frame `start` at the buffer's start.
/// The work is bounded by `frames` whatever the file holds now. One thread at a time.
package final class TailReader {
    private let fd: Int32
    private let handle: OpaquePointer
    private let stream: Resampler.Stream?
    private let channelCount: Int
    private let frames: Int
    private let start: Int
    private let left: UnsafeMutablePointer<Float>
    private let right: UnsafeMutablePointer<Float>?
    /// More input than `frames` can come from (the longest n with round(n × rate / fileRate)
    /// == frames) means the file changed.
    private let inputLimit: Int
    private let fileRate: Double
    private let rate: Double
    private static let chunkFrames = 4_096
    private let chunk: UnsafeMutablePointer<Float>
    private let planes: [UnsafeMutablePointer<Float>]
    /// The converter's frames before `start` (the head's), for the peak only.
    private let skipped: [UnsafeMutablePointer<Float>]
    private var input = 0
    private var produced = 0
    private var ended = false
    private var finished = false
    private var largest: Float = 0
    /// Set when the file turned out not to be what was loaded (or could not be read): nothing
    /// more is written.
    package private(set) var failed = false

    /// Opens the file; nil when it is not `channelCount` channels at a rate it can read.
    package init?(loader: SoundFileLoader, path: String, root: String? = nil, frames: Int, from start: Int, channelCount: Int,
                  left: UnsafeMutablePointer<Float>, right: UnsafeMutablePointer<Float>?) throws(SoundFileError) {
        guard frames > 0, start >= 0, start < frames, channelCount == 1 || channelCount == 2 else { return nil }
        let fd = try SoundFileError.openGated(path, root: root)
        var info = SF_INFO()
        let handle: OpaquePointer
        do {
            handle = try SoundFileError.openSoundFile(path) { sf_open_fd(fd, Int32(SFM_READ), &info, 0) }
        } catch {
            close(fd)
            throw error
        }
        let fileRate = Double(info.samplerate)
        let rate = loader.targetSampleRate ?? fileRate
        var stream: Resampler.Stream?
        if Int(info.channels) == channelCount, info.samplerate > 0, rate != fileRate {
            stream = try? Resampler.Stream.reusable(channelCount: channelCount, from: fileRate, to: rate)
        }
        guard Int(info.channels) == channelCount, info.samplerate > 0, rate == fileRate || stream != nil else {
            sf_close(handle)
            close(fd)
            return nil
        }
        self.fd = fd
        self.handle = handle
        self.stream = stream
        self.channelCount = channelCount
        self.frames = frames
        self.start = start
        self.left = left
        self.right = right
        self.fileRate = fileRate
        self.rate = rate
        inputLimit = rate == fileRate ? frames : Int(((Double(frames) + 0.5) * fileRate / rate).rounded(.up)) + 1
        chunk = .allocate(capacity: Self.chunkFrames * channelCount)
        planes = (0..<channelCount).map { _ in .allocate(capacity: Self.chunkFrames) }
        skipped = (0..<channelCount).map { _ in .allocate(capacity: Self.chunkFrames) }
    }

    deinit {
        chunk.deallocate()
        for p in planes + skipped { p.deallocate() }
        if !failed, let stream { Resampler.Stream.recycle(stream) }
        sf_close(handle)
        close(fd)
    }

    /// The frames written into the buffer so far.
    package var written: Int { max(0, min(produced, frames) - start) }

    /// The largest |sample| of the sound's frames made so far, head included (as `Sound.peak`).
    package var peak: Float { largest > Float.greatestFiniteMagnitude / 4 ? .infinity : largest }

    /// Writes the buffer's frames up to `target` at least (or the tail's end); false once the
    /// file turned out to have changed (what was written stays as it is).
    /// Read to its end, the file is read to its end too: one longer or shorter than at the load
    /// fails.
    @discardableResult
    package func read(upTo target: Int) -> Bool {
        let through = start + target >= frames
        while !failed, !ended, through || produced < start + target {
            step()
        }
        if ended, !failed { finish() }
        return !failed
    }

    /// Where the frames from `produced` on go: the buffers from `start` on, scratch before.
    private func destination() -> (pointers: [UnsafeMutablePointer<Float>], room: Int) {
        if produced < start { return (skipped, min(Self.chunkFrames, start - produced)) }
        let at = produced - start
        // A stereo file into a mono buffer: its second channel counts for the peak only.
        if channelCount == 2 && right == nil { return ([left + at, skipped[1]], min(Self.chunkFrames, frames - produced)) }
        return (channelCount == 2 ? [left + at, right! + at] : [left + at], frames - produced)
    }

    /// The peak over `count` frames just written at `pointers`.
    private func account(_ pointers: [UnsafeMutablePointer<Float>], _ count: Int) {
        for c in 0..<channelCount {
            let p = pointers[c]
            for i in 0..<count {
                let a = abs(p[i])
                if !(a <= largest) { largest = a.isNaN ? .infinity : a }
            }
        }
        produced += count
    }

    /// One chunk of the file through the converter (or what it holds once the file has ended).
    private func step() {
        let got = Int(sf_readf_float(handle, chunk, sf_count_t(Self.chunkFrames)))
        var count = 0
        if got > 0 {
            input += got
            guard input <= inputLimit else {
                failed = true
                return
            }
            for c in 0..<channelCount {
                let plane = planes[c]
                for f in 0..<got {
                    let x = chunk[f &* channelCount &+ c]
                    plane[f] = x.isFinite ? x : 0
                }
            }
            count = got
        } else {
            ended = true
            guard sf_error(handle) == Int32(SF_ERR_NO_ERROR), input > 0 else {
                failed = true
                return
            }
            if stream == nil { return }
        }
        var consumed = 0
        while produced < frames {
            let (to, room) = destination()
            guard let stream else {
                let n = min(count - consumed, room)
                if n == 0 { break }
                for c in 0..<channelCount where to[c] != planes[c] { to[c].update(from: planes[c] + consumed, count: n) }
                account(to, n)
                consumed += n
                continue
            }
            guard let (taken, made) = try? stream.process(ended ? nil : planes.map { UnsafePointer($0 + consumed) },
                                                          count: count - consumed, into: to, room: room) else {
                failed = true
                return
            }
            account(to, made)
            consumed += taken
            if made == 0 && (ended || consumed >= count || taken == 0) { break }
        }
    }

    /// At the file's end: it must have been as long as loaded; frames the converter did not make
    /// are silence, as in a whole conversion.
    private func finish() {
        if finished { return }
        finished = true
        let length = rate == fileRate ? input : Int((Double(input) * rate / fileRate).rounded())
        guard length == frames else {
            failed = true
            return
        }
        if produced < frames {
            for i in max(produced, start)..<frames {
                left[i - start] = 0
                right?[i - start] = 0
            }
            produced = frames
        }
    }
}
