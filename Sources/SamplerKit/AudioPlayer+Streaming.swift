import Foundation
import SamplerCore
import SoundFiles

extension AudioPlayer {
    /// Streams the file at `path` from disk instead of decoding it into memory: the file is
    /// opened now (and never reopened, so replacing it on disk does not change what plays), and
    /// two rings of `preloadSeconds` each are set aside. `prepareToPlay` (or `play`) fills the
    /// first `preloadSeconds` from the play position, so starts stay sample-exact; a disk
    /// thread shared by the session keeps the ring full while it plays and resamples there when
    /// the file's rate is not the session's. A streamed player plays at rate 1. Underruns are
    /// reported to the delegate (`audioPlayerStreamDidUnderrun`) and play as silence in time.
    ///
    /// `options` chooses the converter and holds a test hook; the defaults suit normal use.
    public convenience init(streamingContentsOf path: String, session: AudioSession, preloadSeconds: Double = 2,
                            options: StreamReaderOptions = .init()) throws {
        guard preloadSeconds > 0, preloadSeconds.isFinite else {
            throw SamplerError("preloadSeconds must be a positive number of seconds, got \(preloadSeconds)")
        }
        let file: StreamFile
        do { file = try StreamFile(path: path) } catch { throw SamplerError("\(error)") }
        let rate = session.sampleRate
        guard rate > 0 else { throw SamplerError("\(path): the session has no server to stream to") }
        // A ring holds fewer than 2^31 frames (over three hours at 192 kHz, 8 GiB a channel).
        guard preloadSeconds * rate <= Double(StreamRing.maximumCapacity) else {
            throw SamplerError("\(path): preloadSeconds \(preloadSeconds) is more than a stream's ring holds at \(Int(rate)) Hz"
                               + " (at most \(StreamRing.maximumCapacity) frames)")
        }
        // At least a few periods, whatever was asked.
        let capacity = max(Int((preloadSeconds * rate).rounded()), 4 * max(session.bufferSize, 256))
        let stream: PlayerStream = try session.lock.withLock {
            let rings = try (0..<2).map { _ in
                try session.held.streaming.ring(capacity: capacity, channelCount: file.channelCount, sampleRate: rate, engine: session.engine)
            }
            return try PlayerStream(file: file, rings: rings, options: options, streamer: session.streaming.streamer, engine: session.engine)
        }
        do {
            try self.init(sound: nil, stream: stream, session: session, url: URL(fileURLWithPath: path), data: nil,
                          sourceRate: file.sampleRate)
        } catch {
            session.lock.withLock { session.streaming.recycle(stream, engine: session.engine) }
            throw error
        }
    }

    /// Plays the file at `path`, decoded into memory or streamed from disk as `source` decides
    /// from its length (`.standard`: files over 30 s stream, with 2 s buffered).
    public convenience init(contentsOf path: String, session: AudioSession, source: SoundSource,
                            options: StreamReaderOptions = .init()) throws {
        if let seconds = try source.preloadSeconds(forFileAt: path) {
            try self.init(streamingContentsOf: path, session: session, preloadSeconds: seconds, options: options)
        } else {
            try self.init(contentsOf: path, session: session)
        }
    }

    /// Whether the player streams from disk.
    public var isStreaming: Bool { stream != nil }

    /// Frames a streamed player has played as silence because the disk was late (0 when
    /// preloaded). The delegate hears of each new batch.
    public var underrunFrameCount: Int { session.lock.withLock { stream?.underrunFrameCount ?? 0 } }
}
