import CSampleRate
import Foundation
import CSoxr
import Locking

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
        let outputFrames = Int((Double(channels.first?.count ?? 0) * targetRate / sourceRate).rounded())
        guard outputFrames > 0 else { return channels.map { _ in [] } }
        let stream = try Stream.reusable(channelCount: channels.count, from: sourceRate, to: targetRate)
        let made = try stream.convert(channels), held = try stream.convert(nil)
        Stream.recycle(stream)
        // Exactly `outputFrames`: the converter's surplus trimmed, frames it did not make silent.
        return (0..<channels.count).map { c in
            let all = made[c] + held[c]
            return all.count >= outputFrames ? Array(all.prefix(outputFrames)) : all + repeatElement(0, count: outputFrames - all.count)
        }
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
        let stream = try Stream(channelCount: channelCount, from: sourceRate, to: targetRate)
        var output = [[Float]](repeating: [], count: channelCount)
        while output[0].count < frames {
            let input = read()
            guard input.count == channelCount, !input[0].isEmpty else { return nil }
            let converted = try stream.convert(input)
            for c in 0..<channelCount { output[c] += converted[c] }
        }
        return output.map { Array($0.prefix(frames)) }
    }

    /// A conversion fed chunk by chunk, all channels through one converter (its filter made
    /// once for them; each channel's frames are those a converter of its own makes): its output,
    /// all chunks together, is the bits of `resample` of the whole input (libsoxr's output does
    /// not depend on how its input is cut), up to the last few frames, which `resample` trims or
    /// pads to the rounded length. One thread at a time.
    package final class Stream {
        private let converter: Converter
        private let channelCount: Int
        private let key: StreamKey
        /// Each channel's output room (`scratchFrames` frames), and its input copied for the
        /// converter (`inputRoom` frames), in memory of the stream's own.
        private let scratch: [UnsafeMutablePointer<Float>]
        private var inputs: [UnsafeMutablePointer<Float>] = []
        private var inputRoom = 0
        private static let scratchFrames = 8_192

        /// Rates `resample` refuses are an error here too.
        package init(channelCount: Int, from sourceRate: Double, to targetRate: Double) throws(SoundFileError) {
            guard channelCount > 0, sourceRate > 0, sourceRate.isFinite, targetRate > 0, targetRate.isFinite,
                  src_is_valid_ratio(targetRate / sourceRate) != 0 else {
                throw SoundFileError(file: "", reason: .resampleFailed("invalid rates \(sourceRate) → \(targetRate)"))
            }
            converter = try Converter(channelCount: channelCount, from: sourceRate, to: targetRate)
            self.channelCount = channelCount
            key = StreamKey(channelCount: channelCount, source: sourceRate, target: targetRate)
            scratch = (0..<channelCount).map { _ in .allocate(capacity: Stream.scratchFrames) }
        }

        deinit {
            for p in scratch { p.deallocate() }
            for p in inputs { p.deallocate() }
        }

        /// A stream for these channels and rates: one given back (`recycle`) if any, cleared,
        /// else a new one. A converter's filter is made once and serves file after file:
        /// libsoxr's `soxr_clear` returns it to its state as created (it keeps the filter its
        /// channels share), and its output is the same bits as a new converter's
        /// (`ResamplerTests`).
        package static func reusable(channelCount: Int, from sourceRate: Double, to targetRate: Double) throws(SoundFileError) -> Stream {
            let key = StreamKey(channelCount: channelCount, source: sourceRate, target: targetRate)
            let taken = idle.withLock { idle -> IdleStream? in
                guard let stream = idle.streams[key]?.popLast() else { return nil }
                if let i = idle.order.lastIndex(of: key) { idle.order.remove(at: i) }
                return stream
            }
            if let taken { return taken.stream }
            return try Stream(channelCount: channelCount, from: sourceRate, to: targetRate)
        }

        /// Gives `stream` back for `reusable`, cleared, without the copy of a whole sound's
        /// input it may hold (`convert`); its caller no longer uses it. At most `idleLimit`
        /// idle streams are kept in all (the one given back last replaces the oldest).
        package static func recycle(_ stream: Stream) {
            stream.converter.clear()
            for p in stream.inputs { p.deallocate() }
            stream.inputs = []
            stream.inputRoom = 0
            let idleStream = IdleStream(stream: stream)
            let dropped = idle.withLock { idle -> [IdleStream] in
                idle.streams[stream.key, default: []].append(idleStream)
                idle.order.append(stream.key)
                var dropped: [IdleStream] = []
                while idle.order.count > idleLimit {
                    let oldest = idle.order.removeFirst()
                    if let s = idle.streams[oldest]?.first {
                        idle.streams[oldest]!.removeFirst()
                        dropped.append(s)
                    }
                }
                return dropped
            }
            // Freed outside the lock.
            _ = dropped
        }

        private static let idleLimit = 4 * max(2, ProcessInfo.processInfo.activeProcessorCount)
        private static let idle = Locked(IdleStreams())

        /// Converts what it can of `count` input frames per channel at `inputs` (nil: the input
        /// has ended) into at most `room` frames per channel at `outputs`: the input frames taken
        /// and the frames made (what it could not yet give out, the next call gives).
        package func process(_ inputs: [UnsafePointer<Float>]?, count: Int, into outputs: [UnsafeMutablePointer<Float>], room: Int)
            throws(SoundFileError) -> (taken: Int, made: Int) {
            try converter.process(inputs, count, into: outputs, room)
        }

        /// Each channel's next output frames for the planar chunk `input` (one array per
        /// channel, all of one length); nil: the input has ended, what the converter still holds.
        package func convert(_ input: [[Float]]?) throws(SoundFileError) -> [[Float]] {
            var output = [[Float]](repeating: [], count: channelCount)
            let count = input?[0].count ?? 0
            if let input {
                if count > inputRoom {
                    for p in inputs { p.deallocate() }
                    inputs = (0..<channelCount).map { _ in .allocate(capacity: count) }
                    inputRoom = count
                }
                for c in 0..<channelCount {
                    input[c].withUnsafeBufferPointer { inputs[c].update(from: $0.baseAddress!, count: min(count, $0.count)) }
                }
            }
            var consumed = 0
            while true {
                let (taken, made) = try converter.process(input == nil ? nil : inputs.map { UnsafePointer($0 + consumed) },
                                                          count - consumed, into: scratch, Stream.scratchFrames)
                for c in 0..<channelCount { output[c] += UnsafeBufferPointer(start: scratch[c], count: made) }
                consumed += taken
                if input != nil {
                    if consumed >= count || (taken == 0 && made == 0) { break }
                } else if made == 0 {
                    break
                }
            }
            return output
        }
    }

    private struct StreamKey: Hashable {
        var channelCount: Int
        var source: Double
        var target: Double
    }

    /// The streams no thread uses, by kind, and the kind of each in the order given back.
    private struct IdleStreams {
        var streams: [StreamKey: [IdleStream]] = [:]
        var order: [StreamKey] = []
    }

    /// A stream no thread uses, waiting in `Stream.idle`.
    ///
    /// `@unchecked Sendable` by contract: it is only ever touched by the one thread that gave
    /// it back (before) or the one that took it (after), each through the pool's lock.
    private struct IdleStream: @unchecked Sendable {
        let stream: Stream
    }

    /// A libsoxr converter for `channelCount` channels in separate buffers, `SOXR_HQ`, freed
    /// with the object. One thread at a time.
    private final class Converter {
        private let handle: soxr_t

        init(channelCount: Int, from source: Double, to target: Double) throws(SoundFileError) {
            var io = soxr_io_spec(SOXR_FLOAT32_S, SOXR_FLOAT32_S)
            var quality = soxr_quality_spec(UInt(SOXR_HQ), 0)
            var error: soxr_error_t?
            guard let handle = soxr_create(source, target, UInt32(channelCount), &error, &io, &quality, nil), error == nil else {
                throw SoundFileError(file: "", reason: .resampleFailed(error.map { String(cString: $0) } ?? "no converter"))
            }
            self.handle = handle
        }

        deinit { soxr_delete(handle) }

        /// Back to its state as created, keeping its filter and buffers.
        func clear() { _ = soxr_clear(handle) }

        /// Converts what it can of `count` input frames per channel at `inputs` (nil: the input
        /// has ended) into at most `room` frames per channel at `outputs`: the input frames taken
        /// and the frames made.
        func process(_ inputs: [UnsafePointer<Float>]?, _ count: Int, into outputs: [UnsafeMutablePointer<Float>], _ room: Int)
            throws(SoundFileError) -> (taken: Int, made: Int) {
            var taken = 0, made = 0
            let error: soxr_error_t? = outputs.withUnsafeBufferPointer { out in
                let destination = UnsafeRawPointer(out.baseAddress!).assumingMemoryBound(to: UnsafeMutableRawPointer?.self)
                guard let inputs else {
                    return soxr_process(handle, nil, 0, &taken, UnsafeMutableRawPointer(mutating: destination), room, &made)
                }
                return inputs.withUnsafeBufferPointer { input in
                    soxr_process(handle, UnsafeRawPointer(input.baseAddress!), count, &taken,
                                 UnsafeMutableRawPointer(mutating: destination), room, &made)
                }
            }
            if let error { throw SoundFileError(file: "", reason: .resampleFailed(String(cString: error))) }
            return (taken, made)
        }
    }
}
