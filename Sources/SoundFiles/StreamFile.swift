import CSndFile
import Foundation

/// A sound file opened once for streaming. The libsndfile handle stays open for the object's
/// life and is never reopened: a file replaced on disk (saved anew, renamed over, deleted) while
/// it plays is not re-read; the stream goes on with the file it opened. (A file rewritten in
/// place, same inode, cannot be protected against without copying it.)
///
/// Threads: the properties are constants, readable anywhere. `read` serializes itself; the disk
/// thread calls it.
///
/// `@unchecked Sendable` by contract: the package properties and `handle` are constants; reads through
/// the handle, `handlePosition` and `nonFiniteSamples` happen only under `lock`.
package final class StreamFile: @unchecked Sendable {
    /// The path as the caller gave it (used in errors).
    package let path: String
    /// Frames of the file, at its own rate.
    package let frameCount: Int64
    package let sampleRate: Double
    package let channelCount: Int

    private let handle: OpaquePointer
    private let lock = NSLock()
    /// Non-finite samples read so far and replaced by silence (guarded by `lock`).
    private var nonFiniteSamples = 0
    /// Non-finite samples read so far and replaced by silence.
    package var nonFiniteSampleCount: Int { lock.withLock { nonFiniteSamples } }
    /// Where the handle's read position is (saves a seek per sequential read).
    private var handlePosition: Int64 = 0

    /// Opens the file at `path` and reads its header. Errors name `path`. Control thread only.
    package init(path: String) throws(SoundFileError) {
        let fd = try SoundFileError.openGated(path)
        var info = SF_INFO()
        let handle = try SoundFileError.openSoundFile(path) { sf_open_fd(fd, Int32(SFM_READ), &info, 1) }
        guard info.channels == 1 || info.channels == 2 else {
            sf_close(handle)
            throw SoundFileError(file: path, reason: .unsupportedChannelCount(Int(info.channels)))
        }
        guard info.frames > 0 else {
            sf_close(handle)
            throw SoundFileError(file: path, reason: .empty)
        }
        guard info.seekable != 0, info.frames < sf_count_t(Int64.max / 4) else {
            sf_close(handle)
            throw SoundFileError(file: path, reason: .notReadable("it cannot be streamed: libsndfile cannot seek in it or does not know its length"))
        }
        self.path = path
        self.handle = handle
        frameCount = Int64(info.frames)
        sampleRate = Double(info.samplerate)
        channelCount = Int(info.channels)
    }

    deinit { sf_close(handle) }

    /// Length in seconds.
    package var duration: Double { Double(frameCount) / sampleRate }

    /// Reads up to `count` frames from file frame `frame` into `buffer` (interleaved,
    /// `channelCount` samples per frame) and returns how many were read; fewer only when the file
    /// holds fewer than its header says (or an I/O error). Disk thread.
    package func read(from frame: Int64, count: Int, into buffer: UnsafeMutablePointer<Float>) -> Int {
        lock.lock()
        defer { lock.unlock() }
        if frame != handlePosition {
            guard sf_seek(handle, sf_count_t(frame), SEEK_SET) >= 0 else { return 0 }
            handlePosition = frame
        }
        let read = Int(max(0, sf_readf_float(handle, buffer, sf_count_t(count))))
        // Non-finite samples (NaN, ±inf in a float file) are played as silence and counted.
        for i in 0..<(read * channelCount) where !buffer[i].isFinite {
            buffer[i] = 0
            nonFiniteSamples += 1
        }
        handlePosition += Int64(read)
        if read < count { handlePosition = -1 }
        return read
    }
}
