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
/// whole sound: frames `start ..< frames` of the sound, frame `start` at the buffer's start, or
/// into a ring of `ring` frames (frame `start + j` at slot j mod `ring`; the ring's memory mapped
/// twice, so that `ring` frames from any slot are one run of addresses), never past the limit
/// each `read` is given. The work is bounded by `frames` whatever the file holds now. One thread
/// at a time.
package final class TailReader {
    private let fd: Int32
    private let handle: OpaquePointer
    private let stream: Resampler.Stream?
    private let channelCount: Int
    private let frames: Int
    private let start: Int
    private let left: UnsafeMutablePointer<Float>
    private let right: UnsafeMutablePointer<Float>?
    private let ring: Int?
    /// The sound frame the current `read` may not write at or past (a ring's slots not yet played).
    private var writeLimit = Int.max
    /// The file's frames in `planes` from `consumed` to `count` not yet through the converter
    /// (a ring's limit can stop a chunk half way).
    private var consumed = 0
    private var count = 0
    /// Past the file's end, the converter has given all it holds.
    private var flushed = false
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
                  left: UnsafeMutablePointer<Float>, right: UnsafeMutablePointer<Float>?, ring: Int? = nil) throws(SoundFileError) {
        guard frames > 0, start >= 0, start < frames, channelCount == 1 || channelCount == 2, ring.map({ $0 > 0 }) ?? true else { return nil }
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
        self.ring = ring
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

    /// Writes the buffer's frames up to `target` at least (or the tail's end), but none at or
    /// past `limit` (frames from the buffer's start: a ring's slots its voice has not played);
    /// false once the file turned out to have changed (what was written stays as it is).
    /// Read to its end, the file is read to its end too: one longer or shorter than at the load
    /// fails.
    @discardableResult
    package func read(upTo target: Int, limit: Int = .max) -> Bool {
        writeLimit = limit >= frames - start ? Int.max : start + max(0, limit)
        let through = start + target >= frames
        while !failed, !(ended && flushed) {
            if !through && produced >= start + target { break }
            if produced < frames && produced >= writeLimit { break }
            step()
        }
        if ended, flushed, !failed { finish() }
        return !failed
    }

    /// Where the frames from `produced` on go: the buffers from `start` on (up to the limit),
    /// scratch before.
    private func destination() -> (pointers: [UnsafeMutablePointer<Float>], room: Int) {
        if produced < start { return (skipped, min(Self.chunkFrames, start - produced)) }
        let at = produced - start
        var room = min(frames, writeLimit) - produced
        var offset = at
        if let ring {
            room = min(room, ring)
            offset = at % ring
        }
        // A stereo file into a mono buffer: its second channel counts for the peak only.
        if channelCount == 2 && right == nil { return ([left + offset, skipped[1]], min(Self.chunkFrames, room)) }
        return (channelCount == 2 ? [left + offset, right! + offset] : [left + offset], room)
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

    /// One chunk of the file through the converter (or what it holds once the file has ended),
    /// or the rest of the last chunk where a limit stopped it.
    private func step() {
        if (consumed >= count || produced >= frames) && !ended {
            let got = Int(sf_readf_float(handle, chunk, sf_count_t(Self.chunkFrames)))
            consumed = 0
            count = 0
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
                if stream == nil {
                    flushed = true
                    return
                }
            }
        }
        while produced < frames {
            let (to, room) = destination()
            if room == 0 { return }
            guard let stream else {
                let n = min(count - consumed, room)
                if n == 0 { return }
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
            if made == 0 {
                if ended {
                    flushed = true
                    return
                }
                // A converter that takes no more of a chunk it makes nothing of: on to the next.
                if taken == 0 { consumed = count }
                if consumed >= count { return }
            }
        }
        if ended { flushed = true }
    }

    /// At the file's end: it must have been as long as loaded; frames the converter did not make
    /// are silence, as in a whole conversion (up to the limit; the rest at the next `read`).
    private func finish() {
        if !finished {
            finished = true
            let length = rate == fileRate ? input : Int((Double(input) * rate / fileRate).rounded())
            guard length == frames else {
                failed = true
                return
            }
        }
        let end = min(frames, writeLimit)
        while produced < end {
            let at = max(produced, start) - start
            let offset = ring.map { at % $0 } ?? at
            left[offset] = 0
            right?[offset] = 0
            produced = max(produced, start) + 1
        }
    }
}
