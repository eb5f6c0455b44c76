import SamplerCore

/// What a session could not play as asked (see the device-timeline invariant in docs/timing.md).
public struct LostAudio: Equatable, Sendable {
    /// Stretches of device frames the server skipped the client for, and their frames: each is
    /// a silent gap in the output, with every voice advanced over it.
    public var lostPeriods: Int
    public var lostFrames: Int
    /// Frames the server asked for again after they had been rendered (written as silence).
    public var repeatedFrames: Int
    /// Starts heard later than asked: sent after their frame, or on frames that were lost.
    public var lateStarts: Int
    /// Xruns the server reported to this client.
    public var xruns: Int
    /// Commands that reached the render thread after their frame and could not have their
    /// on-time effect (refused, or applied where the player stood): see docs/timing.md.
    public var lateCommands: Int = 0
}
