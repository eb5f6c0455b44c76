import CSampleRate
import CSoxr

/// Sample-rate conversion of whole sounds with libsoxr's high quality (`SOXR_HQ`: linear
/// phase, 20-bit precision, its pass band to 91% of the lower rate's Nyquist frequency). On a
/// 44.1 kHz → 48 kHz conversion of a 997 Hz + 15 kHz tone its largest error against the ideal
/// tone is −115 dB (libsamplerate's best sinc: −140 dB, 40 times slower), far below a 16-bit
/// sample's own quantization (−98 dB): see `ResamplerTests`.
///
/// Control thread only: it allocates and is far too slow for a real-time callback. Any thread
/// may convert its own sounds at once (each call has its own converter).
package enum Resampler {
    /// Converts planar `channels` from `sourceRate` to `targetRate`.
    ///
    /// Every output channel has exactly `round(frames × targetRate / sourceRate)` frames: the
    /// converter's last frame or two are trimmed or zero-padded so the length never depends on
    /// the converter's rounding. Returns the input unchanged when the rates are equal.
    /// Ratios are held to 1/256…256. Errors have an empty `file`.
    package static func resample(
        _ channels: [[Float]], from sourceRate: Double, to targetRate: Double
    ) throws(SoundFileError) -> [[Float]] {
        guard sourceRate > 0, sourceRate.isFinite, targetRate > 0, targetRate.isFinite else {
            throw SoundFileError(file: "", reason: .resampleFailed("invalid rates \(sourceRate) → \(targetRate)"))
        }
        if sourceRate == targetRate { return channels }
        let ratio = targetRate / sourceRate
        guard src_is_valid_ratio(ratio) != 0 else {
            throw SoundFileError(file: "", reason: .resampleFailed(
                "ratio \(ratio) (\(sourceRate) Hz → \(targetRate) Hz) is outside 1/256…256"))
        }
        var result: [[Float]] = []
        result.reserveCapacity(channels.count)
        for channel in channels {
            result.append(try resample(channel, from: sourceRate, to: targetRate))
        }
        return result
    }

    private static func resample(_ input: [Float], from sourceRate: Double, to targetRate: Double) throws(SoundFileError) -> [Float] {
        let outputFrames = Int((Double(input.count) * targetRate / sourceRate).rounded())
        guard !input.isEmpty, outputFrames > 0 else { return [] }
        var io = soxr_io_spec(SOXR_FLOAT32_I, SOXR_FLOAT32_I)
        var quality = soxr_quality_spec(UInt(SOXR_HQ), 0)
        // Room for a few frames more than expected; the surplus is trimmed below.
        var output = [Float](repeating: 0, count: outputFrames + 64)
        var generated = 0
        let error = input.withUnsafeBufferPointer { source in
            output.withUnsafeMutableBufferPointer { destination in
                soxr_oneshot(sourceRate, targetRate, 1, source.baseAddress, source.count, nil,
                             destination.baseAddress, destination.count, &generated, &io, &quality, nil)
            }
        }
        if let error { throw SoundFileError(file: "", reason: .resampleFailed(String(cString: error))) }
        output.removeLast(output.count - outputFrames)
        // Any frames the converter did not produce stay zero.
        return output
    }


    /// The first `frames` frames of each channel of `resample` applied to the whole input that
    /// `read` hands out chunk by chunk (planar; empty at the input's end), reading only as far as
    /// those frames need: libsoxr's output frames do not depend on how its input was cut nor on
    /// input past what they were made from, so they are the same bits as a whole conversion's
    /// first frames (checked for several ratios by `ResamplerTests`). Nil when the input ends
    /// before them or the rates are invalid (a whole conversion then says why).
    package static func resampleHead(
        channelCount: Int, frames: Int, from sourceRate: Double, to targetRate: Double,
        read: () -> [[Float]]
    ) throws(SoundFileError) -> [[Float]]? {
        guard channelCount > 0, frames > 0, sourceRate > 0, sourceRate.isFinite, targetRate > 0, targetRate.isFinite,
              sourceRate != targetRate, src_is_valid_ratio(targetRate / sourceRate) != 0 else { return nil }
        var io = soxr_io_spec(SOXR_FLOAT32_I, SOXR_FLOAT32_I)
        var quality = soxr_quality_spec(UInt(SOXR_HQ), 0)
        var converters: [soxr_t] = []
        defer { for converter in converters { soxr_delete(converter) } }
        for _ in 0..<channelCount {
            var error: soxr_error_t?
            guard let converter = soxr_create(sourceRate, targetRate, 1, &error, &io, &quality, nil), error == nil else {
                throw SoundFileError(file: "", reason: .resampleFailed(error.map { String(cString: $0) } ?? "no converter"))
            }
            converters.append(converter)
        }
        var output = [[Float]](repeating: [], count: channelCount)
        var scratch = [Float](repeating: 0, count: 1 << 16)
        while output.contains(where: { $0.count < frames }) {
            let input = read()
            guard input.count == channelCount, !input[0].isEmpty else { return nil }
            for c in 0..<channelCount {
                var consumed = 0
                while consumed < input[c].count {
                    var taken = 0, made = 0
                    let error = input[c].withUnsafeBufferPointer { source in
                        scratch.withUnsafeMutableBufferPointer { destination in
                            soxr_process(converters[c], source.baseAddress! + consumed, source.count - consumed, &taken,
                                         destination.baseAddress, destination.count, &made)
                        }
                    }
                    if let error { throw SoundFileError(file: "", reason: .resampleFailed(String(cString: error))) }
                    output[c] += scratch.prefix(made)
                    consumed += taken
                    if taken == 0 && made == 0 { return nil }
                }
            }
        }
        return output.map { Array($0.prefix(frames)) }
    }
}
