/// Receives an `AudioPlayer`'s notifications, as AVAudioPlayerDelegate. Every method is called on
/// the session's event thread (never the real-time thread); all have empty default
/// implementations.
public protocol AudioPlayerDelegate: AnyObject {
    /// The sound played to its end (after all its loops): `successfully` is true. False when
    /// playback stopped because the JACK server went away.
    func audioPlayerDidFinishPlaying(_ player: AudioPlayer, successfully flag: Bool)
    /// The sound could not be decoded (reported by initializers as a thrown error instead; kept
    /// for AVAudioPlayer parity).
    func audioPlayerDecodeErrorDidOccur(_ player: AudioPlayer, error: Error?)
    /// The server went away or threw the client out.
    func audioPlayerBeginInterruption(_ player: AudioPlayer)
    /// A server was reached again (session with `reconnect`).
    func audioPlayerEndInterruption(_ player: AudioPlayer)
    /// A streamed player's disk reads fell behind: `missingFrames` frames played as silence (the
    /// stream skipped them and stays in time). Reported at most every few milliseconds.
    func audioPlayerStreamDidUnderrun(_ player: AudioPlayer, missingFrames: Int)
}

extension AudioPlayerDelegate {
    public func audioPlayerDidFinishPlaying(_ player: AudioPlayer, successfully flag: Bool) {}
    public func audioPlayerDecodeErrorDidOccur(_ player: AudioPlayer, error: Error?) {}
    public func audioPlayerBeginInterruption(_ player: AudioPlayer) {}
    public func audioPlayerEndInterruption(_ player: AudioPlayer) {}
    public func audioPlayerStreamDidUnderrun(_ player: AudioPlayer, missingFrames: Int) {}
}

/// A sound's format as `AudioPlayer.format` reports it.
public struct AudioFormat: Equatable, Sendable {
    /// The rate the sound plays at (the session's rate; the file was resampled to it on load).
    public var sampleRate: Double
    public var channelCount: Int
    /// Frames at `sampleRate`.
    public var frameCount: Int
    /// The rate of the file as it was on disk or in memory.
    public var sourceSampleRate: Double
}
