import CSampleRate

/// Sample-rate conversion of whole sounds with libsamplerate's best sinc converter.
///
/// Control thread only: it allocates and is far too slow for a real-time callback.
package enum Resampler {
    /// Converts planar `channels` from `sourceRate` to `targetRate`.
    ///
    /// Every output channel has exactly `round(frames × targetRate / sourceRate)` frames: the
    /// converter's last frame or two are trimmed or zero-padded so the length never depends on
    /// libsamplerate's rounding. Returns the input unchanged when the rates are equal.
    /// Errors have an empty `file`. Control thread only.
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
                "ratio \(ratio) (\(sourceRate) Hz → \(targetRate) Hz) is outside libsamplerate's 1/256…256"))
        }
        var result: [[Float]] = []
        result.reserveCapacity(channels.count)
        for channel in channels {
            result.append(try resample(channel, ratio: ratio))
        }
        return result
    }

    private static func resample(_ input: [Float], ratio: Double) throws(SoundFileError) -> [Float] {
        let outputFrames = Int((Double(input.count) * ratio).rounded())
        guard !input.isEmpty, outputFrames > 0 else { return [] }

        var error: Int32 = 0
        guard let state = src_new(Int32(SRC_SINC_BEST_QUALITY), 1, &error) else {
            throw failure(error)
        }
        defer { src_delete(state) }

        // Room for a few frames more than expected; the surplus is trimmed below.
        var output = [Float](repeating: 0, count: outputFrames + 64)
        var generated = 0
        error = input.withUnsafeBufferPointer { source in
            output.withUnsafeMutableBufferPointer { destination in
                var used = 0
                var data = SRC_DATA()
                data.end_of_input = 1
                data.src_ratio = ratio
                while generated < destination.count {
                    data.data_in = source.baseAddress! + used
                    data.input_frames = source.count - used
                    data.data_out = destination.baseAddress! + generated
                    data.output_frames = destination.count - generated
                    let status = src_process(state, &data)
                    guard status == 0 else { return status }
                    used += data.input_frames_used
                    generated += data.output_frames_gen
                    if data.output_frames_gen == 0 && data.input_frames_used == 0 { break }
                }
                return 0
            }
        }
        guard error == 0 else { throw failure(error) }
        output.removeLast(output.count - outputFrames)
        // Any frames libsamplerate did not produce stay zero.
        return output
    }

    private static func failure(_ code: Int32) -> SoundFileError {
        SoundFileError(file: "", reason: .resampleFailed(String(cString: src_strerror(code))))
    }
}
