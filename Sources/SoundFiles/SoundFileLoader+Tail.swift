import CSndFile
import Foundation

extension SoundFileLoader {
    /// Decodes the sound file at `path` as `load` does (the same bits: a converter fed chunk by
    /// chunk gives a whole conversion's frames, see `Resampler.Stream`) and writes its frames from
    /// `start` on into `left`, and `right` for a stereo file, never holding the whole sound: the
    /// tail of a sound streamed per voice. `frames` is the sound's length as loaded; the buffers
    /// hold `frames - start` frames. Returns the whole sound's peak (as `Sound.peak`), or nil when
    /// the file no longer decodes to `frames` frames of `channelCount` channels (it changed since
    /// the load); the work is bounded by `frames` whatever the file holds now. Control thread only.
    package func readTail(
        path: String, root: String? = nil, frames: Int, from start: Int, channelCount: Int,
        left: UnsafeMutablePointer<Float>, right: UnsafeMutablePointer<Float>?
    ) throws(SoundFileError) -> Float? {
        guard frames > 0, start >= 0, start < frames, channelCount == 1 || channelCount == 2 else { return nil }
        let fd = try SoundFileError.openGated(path, root: root)
        defer { close(fd) }
        var info = SF_INFO()
        let handle = try SoundFileError.openSoundFile(path) { sf_open_fd(fd, Int32(SFM_READ), &info, 0) }
        defer { sf_close(handle) }
        guard Int(info.channels) == channelCount, info.samplerate > 0 else { return nil }
        let fileRate = Double(info.samplerate)
        let rate = targetSampleRate ?? fileRate
        let stream: Resampler.Stream?
        do {
            stream = rate == fileRate ? nil : try Resampler.Stream(channelCount: channelCount, from: fileRate, to: rate)
        } catch {
            throw SoundFileError(file: path, reason: error.reason)
        }
        // More input than `frames` can come from (the longest n with round(n × rate / fileRate)
        // == frames) means the file changed: stop there.
        let inputLimit = rate == fileRate ? frames : Int(((Double(frames) + 0.5) * fileRate / rate).rounded(.up)) + 1
        let chunkFrames = 4_096
        var chunk = [Float](repeating: 0, count: chunkFrames * channelCount)
        var input = 0, produced = 0
        var largest: Float = 0
        let outputs = [left, right ?? left]
        // Frames `produced ..< produced + count` of the sound: the peak over all of them, the
        // buffers from `start` on (nothing past `frames`: a conversion's surplus is trimmed).
        func emit(_ planes: [[Float]]) {
            let count = planes[0].count
            let end = min(produced + count, frames)
            for c in 0..<channelCount where end > produced {
                planes[c].withUnsafeBufferPointer { plane in
                    for i in produced..<end {
                        let x = plane[i - produced]
                        let a = abs(x)
                        if !(a <= largest) { largest = a.isNaN ? .infinity : a }
                        if i >= start, c == 0 || right != nil { outputs[c][i - start] = x }
                    }
                }
            }
            produced += count
        }
        while true {
            let planes = Self.readChunk(handle, into: &chunk, frames: chunkFrames, channelCount: channelCount)
            guard !planes.isEmpty else { break }
            input += planes[0].count
            guard input <= inputLimit else { return nil }
            do {
                emit(try stream?.convert(planes) ?? planes)
            } catch {
                throw SoundFileError(file: path, reason: error.reason)
            }
        }
        guard sf_error(handle) == Int32(SF_ERR_NO_ERROR), input > 0 else { return nil }
        if let stream {
            do { emit(try stream.convert(nil)) } catch { throw SoundFileError(file: path, reason: error.reason) }
        }
        let length = rate == fileRate ? input : Int((Double(input) * rate / fileRate).rounded())
        guard length == frames else { return nil }
        // Frames the converter did not make are silence, as in a whole conversion.
        if produced < frames {
            for i in max(produced, start)..<frames {
                left[i - start] = 0
                right?[i - start] = 0
            }
        }
        return largest > Float.greatestFiniteMagnitude / 4 ? .infinity : largest
    }
}
