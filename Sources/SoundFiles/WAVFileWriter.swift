import CSndFile
import Foundation

/// Writes a sound file block by block, for recording and offline rendering.
///
/// Not thread-safe: one thread (a writer thread fed from the real-time side, or the control
/// thread) owns it. `write` allocates only when a block is longer than every earlier one.
///
/// `@unchecked Sendable` by contract: one thread uses a writer at a time, and a hand-over between
/// threads is ordered by the caller (`LivePlayback` hands it to the record tap's thread and
/// closes it only after `RecordTap.stop()` has joined that thread).
package final class WAVFileWriter: @unchecked Sendable {
    package let path: String
    package let sampleRate: Int
    package let channelCount: Int
    /// Frames written so far.
    package private(set) var frameCount = 0

    private var handle: OpaquePointer?
    private var scratch: UnsafeMutablePointer<Float>
    private var scratchFrames = 0

    /// Creates (or truncates) the file at `path`. Control thread only.
    package init(
        path: String, sampleRate: Int, channelCount: Int,
        format: WAVSampleFormat = .float32, container: SoundFileFormat = .wav
    ) throws(SoundFileError) {
        func failed(_ why: String) -> SoundFileError { SoundFileError(file: path, reason: .writeFailed(why)) }
        guard sampleRate > 0 else { throw failed("invalid sample rate \(sampleRate)") }
        guard channelCount > 0 else { throw failed("invalid channel count \(channelCount)") }
        let directory = (path as NSString).deletingLastPathComponent
        var isDirectory: ObjCBool = false
        if !directory.isEmpty,
           !FileManager.default.fileExists(atPath: directory, isDirectory: &isDirectory) || !isDirectory.boolValue {
            throw failed("the directory \(directory) does not exist")
        }

        var info = SF_INFO()
        info.samplerate = Int32(clamping: sampleRate)
        info.channels = Int32(clamping: channelCount)
        info.format = container.libsndfileFormat(format)
        guard sf_format_check(&info) != 0 else {
            throw failed("libsndfile cannot write \(container.name) with \(format.name) samples and \(channelCount) channels")
        }
        guard let handle = sf_open(path, Int32(SFM_WRITE), &info) else {
            throw failed(SoundFileError.libsndfileMessage(nil))
        }
        // The PEAK chunk libsndfile adds to float files carries a timestamp: without it, the same
        // render gives the same bytes every time.
        sf_command(handle, Int32(SFC_SET_ADD_PEAK_CHUNK), nil, Int32(SF_FALSE))
        if format != .float32 {
            // Without this, a sample just above 1.0 wraps to a full-scale negative value.
            sf_command(handle, Int32(SFC_SET_CLIPPING), nil, Int32(SF_TRUE))
        }
        self.handle = handle
        self.path = path
        self.sampleRate = sampleRate
        self.channelCount = channelCount
        scratch = .allocate(capacity: 0)
    }

    deinit {
        close()
        scratch.deallocate()
    }

    /// Appends `frameCount` frames of a mono or stereo file. For a mono file `right` is ignored;
    /// for a stereo file a `nil` `right` repeats `left`. Control thread only.
    package func write(left: UnsafePointer<Float>, right: UnsafePointer<Float>?, frameCount: Int) throws(SoundFileError) {
        guard channelCount <= 2 else {
            throw SoundFileError(file: path, reason: .writeFailed(
                "write(left:right:) takes 1 or 2 channels; the file has \(channelCount)"))
        }
        if channelCount == 1 {
            return try write(interleaved: left, frameCount: frameCount)
        }
        reserve(frames: frameCount)
        let right = right ?? left
        for f in 0..<frameCount {
            scratch[2 * f] = left[f]
            scratch[2 * f + 1] = right[f]
        }
        try write(interleaved: scratch, frameCount: frameCount)
    }

    /// Appends `frameCount` frames of interleaved samples (`channelCount` per frame).
    /// Control thread only.
    package func write(interleaved samples: UnsafePointer<Float>, frameCount: Int) throws(SoundFileError) {
        guard let handle else {
            throw SoundFileError(file: path, reason: .writeFailed("the writer is closed"))
        }
        guard frameCount > 0 else { return }
        let written = Int(sf_writef_float(handle, samples, sf_count_t(frameCount)))
        self.frameCount += max(0, written)
        guard written == frameCount else {
            throw SoundFileError(file: path, reason: .writeFailed(SoundFileError.libsndfileMessage(handle)))
        }
    }

    /// Finishes the header and closes the file. Safe to call more than once; `deinit` calls it.
    /// Control thread only.
    package func close() {
        guard let handle else { return }
        sf_close(handle)
        self.handle = nil
    }

    /// Writes planar `channels` (all the same length; zero frames makes a valid empty file) to
    /// `path` in one go. Control thread only.
    package static func write(
        path: String, channels: [[Float]], sampleRate: Int,
        format: WAVSampleFormat = .float32, container: SoundFileFormat = .wav
    ) throws(SoundFileError) {
        let frames = channels.first?.count ?? 0
        guard channels.allSatisfy({ $0.count == frames }) else {
            throw SoundFileError(file: path, reason: .writeFailed("channels have different lengths"))
        }
        let writer = try WAVFileWriter(
            path: path, sampleRate: sampleRate, channelCount: channels.count, format: format, container: container)
        var interleaved = [Float](repeating: 0, count: frames * channels.count)
        for (c, channel) in channels.enumerated() {
            for f in 0..<frames { interleaved[f * channels.count + c] = channel[f] }
        }
        let result: Result<Void, SoundFileError> = interleaved.withUnsafeBufferPointer { buffer in
            Result { () throws(SoundFileError) in
                guard let base = buffer.baseAddress else { return }
                try writer.write(interleaved: base, frameCount: frames)
            }
        }
        writer.close()
        try result.get()
    }

    private func reserve(frames: Int) {
        guard frames > scratchFrames else { return }
        scratch.deallocate()
        scratch = .allocate(capacity: frames * channelCount)
        scratchFrames = frames
    }
}
