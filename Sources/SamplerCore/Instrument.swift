/// How an instrument picks among the samples of one velocity layer.
public enum SampleSelection: Equatable, Sendable {
    /// In turn: first, second, …, first again, in the order of the triggers' frames.
    case roundRobin
    /// At random: a hash of the seed and the trigger's frame (and its place among the layer's
    /// triggers on that frame), so the same program picks the same samples live and offline,
    /// whatever order its triggers reach the render thread in.
    case random(seed: UInt64)
}

/// One velocity layer: the samples played for velocities `velocities` (1…127).
public struct InstrumentLayer: Equatable, Sendable {
    public var velocities: ClosedRange<Int>
    public var sounds: [SoundID]
    public var selection: SampleSelection
    /// The layer's own gain, on top of the instrument's (Hydrogen's per-layer gain).
    public var gain: Gain
    /// The level for each velocity 0…127 (128 values, an SFZ curve); nil: velocity / 127.
    public var velocityCurve: [Float]?

    public init(velocities: ClosedRange<Int> = 1...127, sounds: [SoundID], selection: SampleSelection = .roundRobin,
                gain: Gain = .unity, velocityCurve: [Float]? = nil) {
        precondition(velocityCurve.map { $0.count == 128 } ?? true, "a velocity curve has 128 levels")
        self.velocities = velocities
        self.sounds = sounds
        self.selection = selection
        self.gain = gain
        self.velocityCurve = velocityCurve
    }
}

/// A drum-machine instrument: velocity layers, gain, pan, loops, a choke group and a pool of
/// voices (players `firstPlayer ..< firstPlayer + voiceCount`). Triggered with
/// `Command.trigger`, or by MIDI note, it is resolved on the render thread, so a pattern step and
/// a MIDI note take the same path.
public struct InstrumentDefinition: Equatable, Sendable {
    public var firstPlayer: Int
    /// 1: one voice, a re-trigger fades the old sound out over `declickFrames` while the new one
    /// starts on its frame. N > 1: a pool; a trigger takes a free voice, or steals the oldest.
    public var voiceCount: Int
    public var gain: Gain
    public var pan: Float
    public var loops: Int
    /// Instruments sharing a non-zero group silence each other (an open hi-hat choked by the
    /// closed one), with a fade of `chokeFadeFrames`.
    public var chokeGroup: Int
    public var layers: [InstrumentLayer]
    public var declickFrames: Int
    public var chokeFadeFrames: Int
    /// MIDI notes (0…127) that trigger it.
    public var midiNotes: [Int]
    public var panLaw: PanLawKind
    /// Round robin counts every trigger of the instrument, whatever its layer (sfizz counts a
    /// region's sequence on every note of its key); false: each layer counts its own.
    public var roundRobinAcrossLayers: Bool = false
    /// The voices' amplitude envelope; nil: the sample plays at its level and note-offs do
    /// nothing.
    public var envelope: AmplitudeEnvelope?
    /// Played by its MIDI notes' note-offs instead of their note-ons, at the note-on's velocity
    /// (SFZ's `trigger=release`: a release noise).
    public var triggersOnNoteOff: Bool = false
    /// The output its voices are mixed into: 0 the main mix, k the engine's output k (see
    /// `Engine.render(frameCount:periodStart:outputs:outputCount:)`); 0 ..< `Engine.maxOutputCount`.
    public var output: Int = 0
    /// Plays only while every one of these controllers is within its range on the trigger's
    /// channel (SFZ's `locc`/`hicc`); a choke by it, too, needs them.
    public var conditions: [ControllerRange] = []
    /// Plays only while this key switch is in force (the last of the kit's key-switch notes
    /// pressed, or the kit's default; SFZ's `sw_last`); nil: whatever is.
    public var keySwitch: Int?
    /// Plays only while this key is held down (SFZ's `sw_down`), only while it is not (`sw_up`),
    /// only when the note-on before the one that plays it was this key (`sw_previous`).
    public var keyDown: Int?
    public var keyUp: Int?
    public var previousKey: Int?
    /// Plays only while another key is held down (true: SFZ's `trigger=legato`), or only while
    /// none is (false: `trigger=first`); nil: either.
    public var legato: Bool?
    /// A note-off instrument's level falls by this many dB per frame its note was held, from
    /// the note's note-on to the trigger (SFZ's `rt_decay`, given per second); 0: none.
    public var heldDecayPerFrame: Double = 0
    /// The controller that holds its note-offs while at or above 64 (SFZ's `sustain_cc`; nil:
    /// none holds them, `sustain_sw=off`). Sostenuto (CC66) holds the notes down when it is
    /// pressed, whatever this is.
    public var sustainController: Int? = 64
    /// The MIDI channels (1…16) whose notes and controllers play it (SFZ's `lochan`/`hichan`);
    /// triggers that name no channel (patterns, OSC and SamplerKit triggers) are channel 1.
    public var channels: ClosedRange<Int> = 1...16
    /// Also triggered when this controller moves into the range (from another value), at the
    /// value's velocity (SFZ's `on_locc`/`on_hicc`: a hi-hat pedal's chick).
    public var controllerTrigger: ControllerRange?
    /// Controllers that steer its voices' level, pan and pitch (see `ControllerModulation`).
    public var modulations: [ControllerModulation] = []
    /// Cents at full pitch bend up (+1) and down (−1; e.g. −200); 0: the bend does nothing.
    public var bendUp: Float = 0
    public var bendDown: Float = 0
    /// The fastest rate its voices can play at, relative to their sound's: every pitch modulation
    /// at its largest (a curve's largest point; a relative one measured from anywhere on it), the
    /// bend at whichever end raises the pitch more, the random pitch and the tuning, all upwards
    /// (at most 256: eight octaves).
    public var fastestRate: Float {
        func clamped(_ x: Float) -> Float { x.isFinite ? x : 0 }
        // The bend at +1 adds `bendUp` cents, at −1 `bendDown` (negative: down).
        var cents = max(0, clamped(bendUp), clamped(bendDown)) + abs(min(9600, max(-9600, clamped(randomCents))))
            + max(0, min(9600, clamped(tuneCents)))
        let own = modulations.count
        for (k, m) in InstrumentTables.modulations(of: self).enumerated()
        where m.target == .pitch && (0..<Controller.count).contains(m.controller) && m.depth.isFinite {
            var largest: Float = 1
            if let curve = m.curve { largest = curve.reduce(0) { max($0, $1.isFinite ? abs($1) : 0) } }
            cents += abs(m.depth) * largest * (k >= own ? 2 : 1)
        }
        return cents.isFinite ? Float(centsRate(min(9600, cents))) : 256
    }

    /// Volume (CC7, squared, unity at 100), expression (CC11, squared, unity at 127) and pan
    /// (CC10, centred at 64) steer it as General MIDI players and sfizz do, unless its own
    /// modulations use those controllers.
    public var followsChannelControllers = true
    /// One-way chokes (SFZ's `group`/`off_by`): a trigger of this instrument silences the voices
    /// of every other instrument whose `offBy` is its `group`, except those of its own group and
    /// note (as sfizz does). nil: `chokeGroup` for both (instruments of one group silence each
    /// other).
    public var group: Int?
    public var offBy: Int?
    /// Plays no sound: a trigger only chokes (SFZ's regions with `end=-1`).
    public var isSilent = false
    /// Each trigger's level raised by a random 0 … `randomGainDb` dB, and its pitch moved by a
    /// random 0 … `randomCents` cents (SFZ's `amp_random`, `pitch_random`, as sfizz draws them):
    /// a function of the trigger's frame, so that live and offline renders draw the same.
    public var randomGainDb: Float = 0
    public var randomCents: Float = 0
    /// Every trigger's pitch moved by this many cents, by its voice's rate (linear
    /// interpolation): a sample played at many pitches is held once, not once a pitch. The
    /// bend, controllers and random pitch add to it. Sounds streamed through a ring play at
    /// their own pitch.
    public var tuneCents: Float = 0
    /// Each trigger starts its sample a random 0 … `randomOffsetFrames` frames in (SFZ's
    /// `offset_random`), drawn as the level and pitch are.
    public var randomOffsetFrames: Int = 0
    /// The random offset is a random delay's (its samples begin with silence): the envelope's
    /// delay is shortened by it as well.
    public var randomOffsetShortensDelay = false
    /// Its voices loop only until released (SFZ's `loop_mode=loop_sustain`): the release (a
    /// note-off, or the pedal's) ends the loop, and the voice plays on through the rest of the
    /// sample (its sounds' continuations, `Engine.register(_:continuation:)`).
    public var loopsUntilRelease = false
    /// Frames over which a sounding voice's level glides to what a controller change gives it
    /// (a straight line from the change's frame; pan and pitch move in one step); nil: its
    /// `declickFrames`. A voice in its envelope's attack, hold, decay or release, or fading out,
    /// takes the change in one step.
    public var steerFrames: Int?
    /// Each voice through this filter (nil: none).
    public var filter: VoiceFilter?

    public init(firstPlayer: Int, voiceCount: Int = 1, gain: Gain = .unity, pan: Float = 0, loops: Int = 0,
                chokeGroup: Int = 0, layers: [InstrumentLayer], declickFrames: Int = 96, chokeFadeFrames: Int = 240,
                midiNotes: [Int] = [], panLaw: PanLawKind = .constantPower, roundRobinAcrossLayers: Bool = false,
                envelope: AmplitudeEnvelope? = nil, triggersOnNoteOff: Bool = false, output: Int = 0) {
        self.output = output
        self.envelope = envelope
        self.triggersOnNoteOff = triggersOnNoteOff
        self.panLaw = panLaw
        self.roundRobinAcrossLayers = roundRobinAcrossLayers
        self.firstPlayer = firstPlayer
        self.voiceCount = max(1, voiceCount)
        self.gain = gain
        self.pan = pan
        self.loops = loops
        self.chokeGroup = chokeGroup
        self.layers = layers
        self.declickFrames = declickFrames
        self.chokeFadeFrames = chokeFadeFrames
        self.midiNotes = midiNotes
    }
}
