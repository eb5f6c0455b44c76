import SamplerCore
import SoundFiles

/// Where a player's samples come from: decoded into memory when it is made, or streamed from
/// disk while it plays.
///
/// Preloading suits short sounds (drum hits) and costs the whole file as float in memory (an
/// hour of stereo at 48 kHz is 1.4 GB). Streaming costs two small rings per player (about
/// `preloadSeconds` each) and a share of one disk thread; starts stay sample-exact because a
/// ring is filled before its start is sent.
public enum SoundSource: Sendable, Equatable {
    /// Decode the whole file at load time.
    case preload
    /// Stream from disk, keeping `preloadSeconds` buffered ahead of the play position (filled at
    /// `prepareToPlay`, and again before a seek lands).
    case stream(preloadSeconds: Double = 2)
    /// Stream files longer than `threshold` seconds, preload the others.
    case automatic(threshold: Double = 30, preloadSeconds: Double = 2)

    /// The default automatic choice: stream what is longer than 30 s, with 2 s buffered.
    public static let standard = SoundSource.automatic()

    /// nil to preload a file of `duration` seconds, else the seconds to keep buffered.
    public func preloadSeconds(forDuration duration: Double) -> Double? {
        switch self {
        case .preload: nil
        case .stream(let seconds): seconds
        case .automatic(let threshold, let seconds): duration > threshold ? seconds : nil
        }
    }

    /// How this source decides for the file at `path` (its header is read, not its samples).
    func preloadSeconds(forFileAt path: String) throws -> Double? {
        if case .preload = self { return nil }
        let file: StreamFile
        do { file = try StreamFile(path: path) } catch { throw SamplerError("\(error)") }
        return preloadSeconds(forDuration: file.duration)
    }
}
