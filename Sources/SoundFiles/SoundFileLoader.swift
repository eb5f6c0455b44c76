import CSndFile
import Foundation
import SamplerCore

/// Decodes sound files (anything libsndfile reads: WAV, AIFF, FLAC, Ogg Vorbis, …) into `Sound`s,
/// converting them to one sample rate at load time so that playback never resamples.
///
/// Formats with a header are recognised from their contents. Headerless data needs the type hint
/// `"raw"` (or a name ending in `.raw`): it is read as little-endian 32-bit float, mono, at the
/// target rate (48 kHz when there is no target).
///
/// Control thread only.
package struct SoundFileLoader: Sendable {
    /// The rate every loaded sound is converted to; `nil` keeps each file's own rate.
    package var targetSampleRate: Double?

    /// Control thread only.
    /// Called with the file and a one-line message for what was repaired while loading (e.g.
    /// non-finite samples replaced by silence). Default: printed to standard error as
    /// `sampler: warning: FILE: MESSAGE`.
    package var warn: @Sendable (_ file: String, _ message: String) -> Void = SoundFileLoader.printWarning

    package static let printWarning: @Sendable (String, String) -> Void = { file, message in
        FileHandle.standardError.write(Data("sampler: warning: \(file): \(message)\n".utf8))
    }

    package init(targetSampleRate: Double? = nil) {
        self.targetSampleRate = targetSampleRate
    }

    /// Loads the sound file at `path`: a regular file only (through `FileGate`: a FIFO or a device
    /// is refused without blocking). Errors name `path` as given. Control thread only.
    /// With `root`, only a file under that directory (what was opened is checked: see `FileGate`).
    package func load(path: String, root: String? = nil) throws(SoundFileError) -> Sound {
        try loadWithFileRate(path: path, root: root).sound
    }

    /// `load(path:root:)`, and the file's own rate (before any conversion).
    package func loadWithFileRate(path: String, root: String? = nil) throws(SoundFileError) -> (sound: Sound, fileRate: Double) {
        let fd = try SoundFileError.openGated(path, root: root)
        defer { close(fd) }
        return try decode(file: path, typeHint: nil) { info in
            sf_open_fd(fd, Int32(SFM_READ), info, 0)
        }
    }

    /// The first `frames` frames of the sound file at `path` as a whole `load` begins with them
    /// (the same bits), with the frame count a whole load has when the file holds what its header
    /// says, and the file's own (at its rate); nil when the file is shorter than that or its rate cannot be converted (load it
    /// whole). A file at the target rate is read as it is; one at another rate is converted as
    /// far as the head needs (libsoxr's first output frames do not depend on what follows: see
    /// `Resampler.resampleHead`). Non-finite samples are silence, as in `load`. Control thread only.
    /// The head's samples are in `memory` (the heap when nil); nil before anything is read or
    /// allocated when the sound's frames are not in `accepting`.
    package func loadHead(path: String, root: String? = nil, frames: Int, accepting: ClosedRange<Int> = 0...Int.max,
                          memory: (any SampleMemory)? = nil) throws(SoundFileError) -> (head: Sound, fileFrames: Int, nativeFrames: Int)? {
        let fd = try SoundFileError.openGated(path, root: root)
        defer { close(fd) }
        var info = SF_INFO()
        let handle = try SoundFileError.openSoundFile(path) { sf_open_fd(fd, Int32(SFM_READ), &info, 0) }
        defer { sf_close(handle) }
        let channelCount = Int(info.channels)
        let fileRate = Double(info.samplerate)
        let rate = targetSampleRate ?? fileRate
        // A header may give no length (libsndfile's largest count) or any: past 2^40 frames, load it whole.
        let converted = (Double(info.frames) * rate / fileRate).rounded()
        guard channelCount == 1 || channelCount == 2, frames > 0, info.frames > 0, converted < 0x1p40 else { return nil }
        let fileFrames = rate == fileRate ? Int(info.frames) : Int(converted)
        guard fileFrames > frames, accepting.contains(fileFrames) else { return nil }
        // Decoded (and converted) straight into the head's memory: the file's frames in chunks,
        // each channel's non-finite samples as silence.
        let chunkFrames = 1_024
        let chunk = UnsafeMutablePointer<Float>.allocate(capacity: chunkFrames * channelCount)
        let planes = (0..<channelCount).map { _ in UnsafeMutablePointer<Float>.allocate(capacity: chunkFrames) }
        defer {
            chunk.deallocate()
            for p in planes { p.deallocate() }
        }
        /// The next chunk of at most `count` frames, planar in `planes`: its frames (0 at the end).
        func read(_ count: Int) -> Int {
            let got = Int(sf_readf_float(handle, chunk, sf_count_t(min(count, chunkFrames))))
            guard got > 0 else { return 0 }
            for c in 0..<channelCount {
                let plane = planes[c]
                for f in 0..<got {
                    let x = chunk[f &* channelCount &+ c]
                    plane[f] = x.isFinite ? x : 0
                }
            }
            return got
        }
        let stream: Resampler.Stream?
        if rate == fileRate {
            stream = nil
        } else {
            // Rates it cannot convert: loaded whole, which says why.
            guard let converter = try? Resampler.Stream.reusable(channelCount: channelCount, from: fileRate, to: rate) else { return nil }
            stream = converter
        }
        var reusable = true
        defer { if reusable, let stream { Resampler.Stream.recycle(stream) } }
        var failure: SoundFileError?
        let head = Sound(frames: frames, channelCount: channelCount, sampleRate: rate, memory: memory) { left, right in
            let outputs = channelCount == 2 ? [left, right] : [left]
            var written = 0
            while written < frames {
                // At the file's rate, no more than the head; converted, whole chunks (the
                // converter holds back some frames whatever it is given).
                let got = read(stream == nil ? frames - written : chunkFrames)
                guard got > 0 else { return false }
                guard let stream else {
                    for c in 0..<channelCount { (outputs[c] + written).update(from: planes[c], count: got) }
                    written += got
                    continue
                }
                // libsoxr's first output frames do not depend on how its input was cut nor on
                // input past what they were made from (`Resampler.resampleHead`).
                var consumed = 0
                while consumed < got, written < frames {
                    do throws(SoundFileError) {
                        let (taken, made) = try stream.process(planes.map { UnsafePointer($0 + consumed) }, count: got - consumed,
                                                               into: outputs.map { $0 + written }, room: frames - written)
                        consumed += taken
                        written += made
                        if taken == 0 && made == 0 { break }
                    } catch {
                        failure = error
                        reusable = false
                        return false
                    }
                }
            }
            return true
        }
        if let failure { throw SoundFileError(file: path, reason: failure.reason) }
        guard let head else { return nil }
        return (head, fileFrames, Int(info.frames))
    }

    /// Loads a sound file held in memory. `name` is only used in errors (and, when `typeHint`
    /// is nil, its extension serves as the hint). Control thread only.
    package func load(bytes: [UInt8], name: String, typeHint: String? = nil) throws(SoundFileError) -> Sound {
        let result: Result<Sound, SoundFileError> = bytes.withUnsafeBytes { buffer in
            Result { () throws(SoundFileError) in try load(buffer: buffer, name: name, typeHint: typeHint).sound }
        }
        return try result.get()
    }

    /// Loads a sound file held in memory; see `load(bytes:name:typeHint:)`. Control thread only.
    package func load(data: Data, name: String, typeHint: String? = nil) throws(SoundFileError) -> Sound {
        try loadWithFileRate(data: data, name: name, typeHint: typeHint).sound
    }

    /// `load(data:name:typeHint:)`, and the file's own rate (before any conversion).
    package func loadWithFileRate(data: Data, name: String, typeHint: String? = nil) throws(SoundFileError) -> (sound: Sound, fileRate: Double) {
        let result: Result<(sound: Sound, fileRate: Double), SoundFileError> = data.withUnsafeBytes { buffer in
            Result { () throws(SoundFileError) in try load(buffer: buffer, name: name, typeHint: typeHint) }
        }
        return try result.get()
    }

    private func load(buffer: UnsafeRawBufferPointer, name: String, typeHint: String?) throws(SoundFileError) -> (sound: Sound, fileRate: Double) {
        guard buffer.count > 0 else {
            throw SoundFileError(file: name, reason: .notAudio("no bytes"))
        }
        let memory = MemoryFile(bytes: buffer)
        return try withExtendedLifetime(memory) { () throws(SoundFileError) -> (sound: Sound, fileRate: Double) in
            try decode(file: name, typeHint: typeHint, open: memory.open)
        }
    }

    /// Opens with `open`, reads every frame as float, and makes a planar `Sound` at the target
    /// rate; with the file's own rate.
    private func decode(
        file: String, typeHint: String?, open: (UnsafeMutablePointer<SF_INFO>) -> OpaquePointer?
    ) throws(SoundFileError) -> (sound: Sound, fileRate: Double) {
        var info = SF_INFO()
        if Self.isRaw(typeHint: typeHint, name: file) {
            info.format = Int32(SF_FORMAT_RAW | SF_FORMAT_FLOAT | SF_ENDIAN_LITTLE)
            info.channels = 1
            info.samplerate = Int32((targetSampleRate ?? 48_000).rounded())
        }
        let handle = try SoundFileError.openSoundFile(file) { open(&info) }
        defer { sf_close(handle) }

        let channelCount = Int(info.channels)
        guard channelCount == 1 || channelCount == 2 else {
            throw SoundFileError(file: file, reason: .unsupportedChannelCount(channelCount))
        }
        let fileRate = Double(info.samplerate)
        var (planes, nonFinite) = try Self.readPlanar(handle, channelCount: channelCount, expectedFrames: info.frames, file: file)
        guard !planes[0].isEmpty else { throw SoundFileError(file: file, reason: .empty) }
        if nonFinite > 0 { warn(file, "\(nonFinite) non-finite samples (NaN or infinite) replaced by silence") }

        var rate = fileRate
        if let target = targetSampleRate, target != fileRate {
            do {
                planes = try Resampler.resample(planes, from: fileRate, to: target)
            } catch {
                throw SoundFileError(file: file, reason: error.reason)
            }
            rate = target
        }
        do {
            return (try Sound(channels: planes, sampleRate: rate, memory: HugePageSampleMemory.shared), fileRate)
        } catch {
            switch error {
            case .empty: throw SoundFileError(file: file, reason: .empty)
            case .unsupportedChannelCount(let n): throw SoundFileError(file: file, reason: .unsupportedChannelCount(n))
            default: throw SoundFileError(file: file, reason: .notAudio(error.description))
            }
        }
    }

    /// Reads until libsndfile returns no more frames (the header's frame count is not trusted:
    /// truncated files hold fewer, lying ones claim more) and splits the interleaved samples into
    /// one array per channel. Non-finite samples (NaN, ±inf in float files) become 0 and are
    /// counted: they would poison every client mixing the output.
    private static func readPlanar(
        _ handle: OpaquePointer, channelCount: Int, expectedFrames: sf_count_t, file: String
    ) throws(SoundFileError) -> (planes: [[Float]], nonFinite: Int) {
        let chunkFrames = 65_536
        var chunk = [Float](repeating: 0, count: chunkFrames * channelCount)
        var planes = [[Float]](repeating: [], count: channelCount)
        var nonFinite = 0
        // Reserve what the header claims only up to 16 M frames: a header can claim anything, and
        // memory is committed as data actually arrives.
        if expectedFrames > 0 {
            for c in 0..<channelCount { planes[c].reserveCapacity(Int(min(expectedFrames, 1 << 24))) }
        }
        while true {
            let read = chunk.withUnsafeMutableBufferPointer { buffer in
                Int(sf_readf_float(handle, buffer.baseAddress, sf_count_t(chunkFrames)))
            }
            guard read > 0 else { break }
            // Decoding stops at the memory budget, whatever the header claimed.
            if (planes[0].count + read) * channelCount * 4 > DecodeBudget.bytes {
                try DecodeBudget.check((planes[0].count + read) * channelCount * 4, what: "\(file): its samples")
            }
            // Each channel's frames written in place (non-finite ones as silence, counted).
            let start = planes[0].count
            for c in 0..<channelCount {
                planes[c].append(contentsOf: repeatElement(0, count: read))
                planes[c].withUnsafeMutableBufferPointer { plane in
                    chunk.withUnsafeBufferPointer { buffer in
                        var bad = 0
                        for f in 0..<read {
                            let x = buffer[f &* channelCount &+ c]
                            let finite = x.isFinite
                            plane[start &+ f] = finite ? x : 0
                            bad &+= finite ? 0 : 1
                        }
                        nonFinite += bad
                    }
                }
            }
        }
        let error = sf_error(handle)
        guard error == Int32(SF_ERR_NO_ERROR) else {
            throw SoundFileError(file: file, reason: .notAudio(SoundFileError.libsndfileMessage(handle)))
        }
        return (planes, nonFinite)
    }

    private static func isRaw(typeHint: String?, name: String) -> Bool {
        var hint = (typeHint ?? (name as NSString).pathExtension).lowercased()
        if hint.hasPrefix(".") { hint.removeFirst() }
        return hint == "raw"
    }
}
