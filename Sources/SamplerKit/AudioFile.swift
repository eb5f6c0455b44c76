import Foundation
import SamplerCore
import SoundFiles

/// A sound file opened for reading, like AVAudioFile: its length and format come from the
/// header; `read(into:)` decodes from `framePosition` on, as 32-bit float, non-interleaved, at
/// the file's own rate (its `processingFormat`). `PlayerNode.scheduleFile` plays it, and
/// `AudioBuffer(file:)` loads it whole.
///
/// Threads: one thread at a time per file (reading moves `framePosition`).
public final class AudioFile: @unchecked Sendable {
    // `@unchecked Sendable` by contract: `framePosition` is the only mutable state and the type
    // is documented as one-thread-at-a-time; the StreamFile it reads serializes its own reads.
    public let url: URL
    /// Frames in the file (at its own rate).
    public let length: Int64
    /// The file's rate and channel count; `frameCount` is `length`.
    public let processingFormat: AudioFormat
    /// Where the next `read` starts, in frames.
    public var framePosition: Int64 = 0
    let file: StreamFile

    /// Opens `url` for reading (any format libsndfile reads). Errors name the file.
    public init(forReading url: URL) throws(SamplerKitError) {
        do { file = try StreamFile(path: url.path) } catch { throw .soundFile(error) }
        self.url = url
        length = file.frameCount
        processingFormat = AudioFormat(sampleRate: file.sampleRate, channelCount: file.channelCount,
                                       frameCount: Int(file.frameCount), sourceSampleRate: file.sampleRate)
    }

    /// Reads up to `frameCount` frames (default: the buffer's capacity) from `framePosition` into
    /// `buffer`, which must have the file's channel count; sets its `frameLength` to what was
    /// read (0 at the end of the file) and moves `framePosition` on.
    public func read(into buffer: AudioBuffer, frameCount: Int? = nil) throws(SamplerKitError) {
        guard buffer.format.channelCount == processingFormat.channelCount else {
            throw .formatMismatch("the buffer has \(buffer.format.channelCount) channels, \(url.lastPathComponent) has \(processingFormat.channelCount)")
        }
        let wanted = max(0, min(frameCount ?? buffer.frameCapacity, buffer.frameCapacity, Int(length - framePosition)))
        let channels = processingFormat.channelCount
        var interleaved = [Float](repeating: 0, count: max(1, wanted * channels))
        let got = wanted == 0 ? 0 : interleaved.withUnsafeMutableBufferPointer { file.read(from: framePosition, count: wanted, into: $0.baseAddress!) }
        for c in 0..<channels {
            for i in 0..<got { buffer.channels[c][i] = interleaved[i * channels + c] }
        }
        buffer.frameLength = got
        framePosition += Int64(got)
        if got < wanted { throw .soundFile(SoundFileError(file: url.path, reason: .notReadable("the file ended \(wanted - got) frames before its header said"))) }
    }
}

/// Audio in memory, like AVAudioPCMBuffer: `frameCapacity` frames of float samples per channel
/// (non-interleaved), of which the first `frameLength` are valid. `PlayerNode.scheduleBuffer`
/// plays its first `frameLength` frames.
///
/// Threads: one thread at a time (a buffer is a value the program fills, then schedules; the
/// player copies what it schedules).
public final class AudioBuffer: @unchecked Sendable {
    // `@unchecked Sendable` by contract: mutable, used by one thread at a time (documented).
    public let format: AudioFormat
    public let frameCapacity: Int
    /// Valid frames, at most `frameCapacity`.
    public var frameLength: Int {
        didSet { frameLength = min(max(0, frameLength), frameCapacity) }
    }
    /// The samples, one array per channel, each `frameCapacity` long.
    public var channels: [[Float]]

    /// An empty buffer of `frameCapacity` frames in `sampleRate` with `channelCount` channels (1 or 2).
    public init(sampleRate: Double, channelCount: Int, frameCapacity: Int) throws(SamplerKitError) {
        guard channelCount == 1 || channelCount == 2 else { throw .formatMismatch("a buffer has 1 or 2 channels, not \(channelCount)") }
        guard sampleRate.isFinite, sampleRate >= 1000, sampleRate <= 768_000 else { throw .formatMismatch("sample rate \(sampleRate) Hz is out of range") }
        guard frameCapacity >= 0, frameCapacity <= Int(Int32.max) else { throw .formatMismatch("frame capacity \(frameCapacity) is out of range") }
        format = AudioFormat(sampleRate: sampleRate, channelCount: channelCount, frameCount: frameCapacity, sourceSampleRate: sampleRate)
        self.frameCapacity = frameCapacity
        frameLength = 0
        channels = Array(repeating: [Float](repeating: 0, count: frameCapacity), count: channelCount)
    }

    /// A buffer holding `channels` (1 or 2 arrays of equal length), all valid.
    public convenience init(channels: [[Float]], sampleRate: Double) throws(SamplerKitError) {
        guard let n = channels.first?.count, channels.allSatisfy({ $0.count == n }) else {
            throw .formatMismatch("a buffer's channels must all have the same length")
        }
        try self.init(sampleRate: sampleRate, channelCount: channels.count, frameCapacity: n)
        self.channels = channels
        frameLength = n
    }

    /// The whole of `file`, read from its start.
    public convenience init(file: AudioFile) throws(SamplerKitError) {
        try self.init(sampleRate: file.processingFormat.sampleRate, channelCount: file.processingFormat.channelCount,
                      frameCapacity: Int(file.length))
        file.framePosition = 0
        try file.read(into: self)
    }

    /// The whole file at `url`.
    public convenience init(contentsOf url: URL) throws(SamplerKitError) {
        try self.init(file: AudioFile(forReading: url))
    }

    /// Its first `frameLength` frames as an engine sound (a copy).
    func makeSound() throws(SamplerKitError) -> Sound {
        guard frameLength > 0 else { throw .formatMismatch("the buffer is empty (frameLength is 0)") }
        do {
            return try Sound(channels: channels.map { Array($0[0..<frameLength]) }, sampleRate: format.sampleRate)
        } catch { throw .formatMismatch("\(error)") }
    }
}

/// Why a SamplerKit call failed, worded for the API (no command-line flags).
public enum SamplerKitError: Error, CustomStringConvertible, Equatable {
    /// A sound file could not be opened or decoded (the message names the file).
    case soundFile(SoundFileError)
    /// Channel counts, rates or lengths that do not fit together.
    case formatMismatch(String)
    /// Frames outside what a file or buffer holds.
    case outOfRange(String)
    /// The session cannot do it now (no server).
    case session(String)

    public var description: String {
        switch self {
        case .soundFile(let e): "\(e)"
        case .formatMismatch(let m): m
        case .outOfRange(let m): "out of range: " + m
        case .session(let m): m
        }
    }
}
