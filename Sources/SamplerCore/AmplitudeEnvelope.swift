// An instrument's amplitude envelope: its stages, what velocity adds to them, and the
// segments the render thread plays its falls in.

/// An amplitude envelope as sfizz shapes SFZ's `ampeg_*`: a straight rise from 0 over the
/// attack, the full level for the hold, then a fall by a constant factor per frame (reaching
/// 1/8,103 (−78 dB) after the decay time) that stops at the sustain level; after a note-off
/// (`Command.release`), the same kind of fall over the release time from wherever the level is,
/// and the voice stops below −80 dB. The render thread plays the falls as straight segments
/// between points of the curve (each at most 10 % below the last), so that a period's split
/// never changes a sample.
public struct AmplitudeEnvelope: Equatable, Sendable {
    public var attackFrames: Int
    public var holdFrames: Int
    /// Frames for the decay's fall by e⁻⁹ (0: straight to the sustain level).
    public var decayFrames: Int
    /// 0…1.
    public var sustain: Float
    /// Frames for the release's fall by e⁻⁹.
    public var releaseFrames: Int
    /// Whether a note-off releases the voice (false: a one-shot's envelope ignores note-offs).
    public var followsNoteOff: Bool
    /// A choke (another instrument of the group starting) releases the voice over these frames,
    /// the fall by e⁻⁹ of a release; nil: the instrument's linear `chokeFadeFrames`.
    public var chokeReleaseFrames: Int?
    /// Frames before the attack, at its start level (SFZ's `ampeg_delay`; the sample plays on under it).
    public var delayFrames: Int = 0
    /// Where the attack starts, 0…1 of the level (SFZ's `ampeg_start`).
    public var start: Float = 0
    /// What velocity 127 adds to the stages (SFZ's `ampeg_vel2delay` … `ampeg_vel2release`):
    /// a trigger at velocity v adds v / 127 of each. nil: none.
    public var velocity: EnvelopeVelocity?

    public init(attackFrames: Int = 0, holdFrames: Int = 0, decayFrames: Int = 0, sustain: Float = 1, releaseFrames: Int = 0,
                followsNoteOff: Bool = true, chokeReleaseFrames: Int? = nil, delayFrames: Int = 0, start: Float = 0) {
        self.delayFrames = max(0, delayFrames)
        self.start = start.isFinite ? min(1, max(0, start)) : 0
        self.chokeReleaseFrames = chokeReleaseFrames.map { max(1, $0) }
        self.attackFrames = max(0, attackFrames)
        self.holdFrames = max(0, holdFrames)
        self.decayFrames = max(0, decayFrames)
        self.sustain = min(1, max(0, sustain))
        self.releaseFrames = max(1, releaseFrames)
        self.followsNoteOff = followsNoteOff
    }

    /// A fall by e⁻⁹ over `frames` in straight segments (see `envelopeSegments(forFall:)`).
    static func segments(forFall frames: Int) -> (frames: Int32, factor: Float) { envelopeSegments(forFall: frames) }
}

/// What velocity 127 adds to an envelope's stages (frames; the sustain level 0…1), each stage
/// held at 0 or more (a release at 1 frame or more; a sustain within 0…1).
public struct EnvelopeVelocity: Equatable, Sendable {
    public var delayFrames: Int
    public var attackFrames: Int
    public var holdFrames: Int
    public var decayFrames: Int
    public var sustain: Float
    public var releaseFrames: Int

    public init(delayFrames: Int = 0, attackFrames: Int = 0, holdFrames: Int = 0, decayFrames: Int = 0, sustain: Float = 0, releaseFrames: Int = 0) {
        self.delayFrames = delayFrames
        self.attackFrames = attackFrames
        self.holdFrames = holdFrames
        self.decayFrames = decayFrames
        self.sustain = sustain.isFinite ? min(1, max(-1, sustain)) : 0
        self.releaseFrames = releaseFrames
    }
}

/// A fall by e⁻⁹ over `frames` in straight segments: their length (each falls by at most 10 %,
/// and at most 256 frames) and the factor per segment. Real-time safe (`exp` only).
@_semantics("no_performance_analysis")
func envelopeSegments(forFall frames: Int) -> (frames: Int32, factor: Float) {
    let perFrame = 9 / Double(max(1, frames))
    let length = max(1, min(256, Int(0.1 / perFrame)))
    return (Int32(length), Float(Double.exp(-perFrame * Double(length))))
}
