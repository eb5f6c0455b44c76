import SamplerCore

/// A decoded patch, of either file version: instruments (one sample each for a version 1 file's
/// players, velocity layers for a drum kit), patterns and an optional song. A version 1 file
/// reads into the same model (see `PatchFormatV1`), so one path takes every patch to the
/// engine. Plain values only; loading the sound files is another module's job.
package struct Patch: Equatable, Sendable {
    /// The format version the file was written in (the model is the same).
    package var version: Int
    /// Quarter notes per minute (a song entry may override it).
    package var tempo: Double
    package var instruments: [DrumInstrument]
    /// May be empty: then every instrument plays once, from the start (a version 1 patch without
    /// a pattern).
    package var patterns: [DrumPattern]
    package var song: Song?
    /// The patch file, exactly as the caller named it (used in error messages).
    package var file: String
    /// How mono samples pan: "constant-power" (default) or "balance" (Hydrogen's default law).
    package var panLaw: PanLawSetting
    /// The controllers' starting values and the key switch in force at the start
    /// (`"controllers"` and `"keySwitch"` in a patch).
    package var controllers = ControllerSetup()
    /// Frames of each long sample kept in memory when the patch is big enough to stream its
    /// samples' tails per voice (`"headFrames"`); nil: the player's default (8,192).
    package var headFrames: Int?
    /// The instruments' named outputs, each once, in the order they first appear.
    package var outputNames: [String] {
        var names: [String] = []
        for i in instruments { if let o = i.output, !names.contains(o) { names.append(o) } }
        return names
    }

    package init(tempo: Double, instruments: [DrumInstrument], patterns: [DrumPattern], song: Song?, file: String,
                panLaw: PanLawSetting = .constantPower, version: Int = 2) {
        self.version = version
        self.panLaw = panLaw
        self.tempo = tempo
        self.instruments = instruments
        self.patterns = patterns
        self.song = song
        self.file = file
    }

    /// The index of the pattern named `name`.
    package func patternIndex(named name: String) -> Int? {
        patterns.firstIndex { $0.name == name }
    }

    /// Every distinct sample file, in first-use order.
    package var samplePaths: [SampleFile] {
        var seen: Set<String> = []
        var files: [SampleFile] = []
        for instrument in instruments {
            for layer in instrument.layers {
                for sample in layer.samples where seen.insert(sample.resolvedPath).inserted { files.append(sample) }
            }
        }
        return files
    }
}

/// A sample file named by a layer.
package struct SampleFile: Equatable, Sendable {
    /// The path exactly as written in the patch.
    package var path: String
    /// `path` itself if absolute, otherwise resolved against the directory that holds the patch.
    package var resolvedPath: String
    /// Decoded into memory or streamed from disk.
    package var loading: SampleLoading
    /// Where the patch file names it, for messages after the patch's file, where its indices do
    /// not say it (a version 1 patch's `sounds.kick`, an SFZ region's `line 3` or, in an included
    /// file, `drums/toms.sfz: line 3`); nil for a version 2 patch's sample
    /// (named `instruments[0].layers[1].samples[2]`, `LoadedPatch.place`) and one made in code.
    /// Not part of equality.
    package var place: String?
    /// The first frame played (frames of the file, at its own rate): SFZ's `offset`.
    package var offset: Int
    /// The last frame played, nil for the file's last: SFZ's `end`.
    package var end: Int?
    /// Played backwards, from `end` to `offset` (SFZ's `direction=reverse`).
    package var reverse: Bool
    /// The frames of the file a looping voice repeats, both ends included (SFZ's `loop_start`,
    /// `loop_end`): it plays from `offset` to the loop's end, then from its start again; nil:
    /// the whole sample loops.
    package var loop: ClosedRange<Int>?
    /// A loop's last frame when it runs to the file's end (its frames are not known before it is decoded).
    package static let toTheEnd = 1 << 40

    /// The file's bytes, when the patch holds them (`"data"`, base64; SFZ's `<sample>` with
    /// `base64data`): `path` only names it.
    package var data: [UInt8]?

    package init(path: String, resolvedPath: String, loading: SampleLoading = .automatic, place: String? = nil,
                 offset: Int = 0, end: Int? = nil, reverse: Bool = false, loop: ClosedRange<Int>? = nil, data: [UInt8]? = nil) {
        self.loop = loop
        self.data = data
        self.path = path
        self.resolvedPath = resolvedPath
        self.loading = loading
        self.place = place
        self.offset = offset
        self.end = end
        self.reverse = reverse
    }

    /// Whether only part of the file plays, or it plays backwards: a copy of its own.
    package var isTrimmed: Bool { offset != 0 || end != nil || reverse || loop != nil || data != nil }

    package static func == (a: SampleFile, b: SampleFile) -> Bool {
        a.path == b.path && a.resolvedPath == b.resolvedPath && a.loading == b.loading && a.offset == b.offset && a.end == b.end
            && a.reverse == b.reverse && a.loop == b.loop && a.data == b.data
    }
}

/// How a sample is played: `"stream": true` / `"preload": true` in a patch. Only an
/// instrument's only sample can stream (a streamed instrument plays one file).
package enum SampleLoading: String, Equatable, Sendable {
    /// Streamed when it is its instrument's only sample and longer than the player's threshold
    /// (30 s by default), else decoded into memory.
    case automatic
    /// Always streamed from disk.
    case stream
    /// Always decoded into memory.
    case preload
}

/// How a layer picks among its samples.
package enum LayerSelection: Equatable, Sendable {
    case roundRobin
    case random(seed: UInt64)
}

/// The samples an instrument plays for one range of velocities.
package struct DrumLayer: Equatable, Sendable {
    /// Velocities (1…127) this layer answers.
    package var velocities: ClosedRange<Int>
    package var samples: [SampleFile]
    package var selection: LayerSelection
    /// The layer's gain on top of the instrument's, in dB.
    package var gainDb: Double
    /// How velocity sets the level; nil: velocity / 127.
    package var velocityCurve: VelocityCurve?

    package init(velocities: ClosedRange<Int> = 1...127, samples: [SampleFile], selection: LayerSelection = .roundRobin,
                gainDb: Double = 0, velocityCurve: VelocityCurve? = nil) {
        self.velocities = velocities
        self.samples = samples
        self.selection = selection
        self.gainDb = gainDb
        self.velocityCurve = velocityCurve
    }
}

/// How velocity sets a layer's level: a shape, then a tracking amount (SFZ's `amp_velcurve_N`
/// and `amp_veltrack`; `"velocityCurve"` and `"velocityTrack"` in a patch).
package struct VelocityCurve: Equatable, Sendable {
    package enum Shape: Equatable, Sendable {
        /// velocity / 127.
        case linear
        /// (velocity / 127)²: sfizz's (and the SFZ specification's) default.
        case squared
        /// Straight lines between (velocity, level) points, velocity 0…127 ascending, level
        /// 0…1; 0 → 0 and 127 → 1 unless given.
        case points([Point])
    }

    package struct Point: Equatable, Sendable {
        package var velocity: Int
        package var level: Double
        package init(velocity: Int, level: Double) {
            self.velocity = velocity
            self.level = level
        }
    }

    package var shape: Shape
    /// -1…1: 1 follows the shape; 0 ignores velocity; below 0 inverts (level = |track| × (1 − shape)).
    package var track: Double

    package init(shape: Shape, track: Double = 1) {
        self.shape = shape
        self.track = track
    }

    /// The level for each velocity 0…127 (128 values).
    package var levels: [Double] {
        var curve: [Double]
        switch shape {
        case .linear: curve = (0...127).map { Double($0) / 127 }
        case .squared: curve = (0...127).map { Double($0) / 127 * Double($0) / 127 }
        case .points(let given):
            var points = given.sorted { $0.velocity < $1.velocity }
            if points.first?.velocity != 0 { points.insert(Point(velocity: 0, level: 0), at: 0) }
            if points.last?.velocity != 127 { points.append(Point(velocity: 127, level: 1)) }
            curve = (0...127).map { v in
                let after = points.firstIndex { $0.velocity >= v }!
                if points[after].velocity == v || after == 0 { return points[after].level }
                let a = points[after - 1], b = points[after]
                return a.level + (b.level - a.level) * Double(v - a.velocity) / Double(b.velocity - a.velocity)
            }
        }
        return curve.map { c in track >= 0 ? 1 - track * (1 - c) : -track * (1 - c) }
    }
}

/// An amplitude envelope, in seconds, shaped as sfizz shapes SFZ's `ampeg_*`: a straight rise
/// over `attack`, full level for `hold`, a fall that reaches −78 dB after `decay` and stops at
/// `sustain` (0…1), and after a note-off (when `noteOff`) a fall that reaches −78 dB after
/// `release`.
package struct Envelope: Equatable, Sendable {
    package var attack: Double
    package var hold: Double
    package var decay: Double
    package var sustain: Double
    package var release: Double
    /// Whether a note-off releases the voice (false: it plays out, as a one-shot).
    package var noteOff: Bool
    /// A choke releases the voice over this time (seconds, a fall by e⁻⁹); nil: the kit's 5 ms
    /// straight fade. SFZ's `off_mode`/`off_time`.
    package var choke: Double?
    /// Seconds at silence before the attack (SFZ's `ampeg_delay`).
    package var delay: Double = 0
    /// Where the attack starts, 0…1 of the level (SFZ's `ampeg_start`).
    package var start: Double = 0
    /// What velocity 127 adds to each stage (seconds, −100…100; the sustain −1…1), a trigger at
    /// velocity v adding v / 127 of it (`"velocity"`; SFZ's `ampeg_vel2delay` …
    /// `ampeg_vel2release`). nil: none.
    package var velocity: EnvelopeStages?

    package init(attack: Double = 0, hold: Double = 0, decay: Double = 0, sustain: Double = 1, release: Double = 0.006,
                 noteOff: Bool = true, choke: Double? = nil, delay: Double = 0, start: Double = 0) {
        self.choke = choke
        self.delay = delay
        self.start = start
        self.attack = attack
        self.hold = hold
        self.decay = decay
        self.sustain = sustain
        self.release = release
        self.noteOff = noteOff
    }
}

/// Seconds (and a sustain level) for each stage of an envelope: what velocity adds to them.
package struct EnvelopeStages: Equatable, Sendable {
    package var delay = 0.0, attack = 0.0, hold = 0.0, decay = 0.0, sustain = 0.0, release = 0.0
    package init(delay: Double = 0, attack: Double = 0, hold: Double = 0, decay: Double = 0, sustain: Double = 0, release: Double = 0) {
        (self.delay, self.attack, self.hold, self.decay, self.sustain, self.release) = (delay, attack, hold, decay, sustain, release)
    }
}

/// One drum: velocity layers, level, position, tuning, MIDI note, choke group and voices.
package struct DrumInstrument: Equatable, Sendable {
    package var id: String
    package var layers: [DrumLayer]
    package var gainDb: Double
    /// -1 (hard left) … 1 (hard right).
    package var pan: Double
    /// Semitones; applied by resampling when the samples are loaded.
    package var tune: Double
    /// Repeats after the first play; -1 forever.
    package var loops: Int
    /// Loops only until released: its release (a note-off) ends the loop and the sample plays on
    /// to its end (`"loopUntilRelease": true`; SFZ's `loop_mode=loop_sustain`).
    package var loopsUntilRelease = false
    /// The MIDI note that triggers it; nil: the General MIDI drum note for its id, if any.
    package var midiNote: Int?
    /// Instruments sharing a non-zero group silence each other.
    package var chokeGroup: Int
    /// 1: one voice (a re-trigger fades the old sound out); N > 1: a pool, the oldest is stolen.
    package var voices: Int
    /// Whether other instruments may have the same `midiNote` (then a note plays them all, in
    /// file order: a multi-microphone drum). `"shareNote": true` in a patch.
    package var sharesNote: Bool
    /// Round robin counts every trigger of the instrument, whatever its velocity layer (as sfizz
    /// counts a region's sequence); false: each layer counts its own triggers.
    /// `"roundRobinAcrossLayers": true` in a patch.
    package var roundRobinAcrossLayers: Bool = false
    /// The voices' amplitude envelope (`"envelope"` in a patch); nil: none.
    package var envelope: Envelope?
    /// Played by its MIDI note's note-offs, at the note-on's velocity, instead of its note-ons
    /// (`"trigger": "noteOff"`; SFZ's `trigger=release`).
    package var triggersOnNoteOff: Bool = false
    /// The named output its voices go to (`"output"` in a patch): a stereo pair of JACK ports
    /// `NAME_L`/`NAME_R` beside the main mix, a stem of `sampler render --stems`; nil: the
    /// main mix.
    package var output: String?
    /// Plays only while these controllers are in range, this key switch is in force and the
    /// note's channel is among these (`"conditions"` in a patch; see
    /// `InstrumentDefinition.conditions`).
    package var conditions: [ControllerRange] = []
    package var keySwitch: Int?
    /// Plays only while this key is down, only while it is up, only after this key's note-on
    /// (`"keyDown"`, `"keyUp"`, `"previousKey"` in `"conditions"`; SFZ's `sw_down`, `sw_up`,
    /// `sw_previous`).
    package var keyDown: Int?
    package var keyUp: Int?
    package var previousKey: Int?
    /// Plays only while another key is held (true: SFZ's `trigger=legato`) or only while none
    /// is (false: `trigger=first`): `"legato"` in `"conditions"`.
    package var legato: Bool?
    package var channels: ClosedRange<Int> = 1...16
    /// The controller whose pedal holds its note-offs (`"sustain"`: a controller number, or
    /// false for none; SFZ's `sustain_cc`, `sustain_sw`).
    package var sustainController: Int? = 64
    /// Triggered by a controller entering a range (`"controllerTrigger"`).
    package var controllerTrigger: ControllerRange?
    /// Controllers steering level, pan and pitch (`"modulations"`).
    package var modulations: [ControllerModulation] = []
    /// Cents at full bend up and down (`"bend": [up, down]`).
    package var bendUp: Double = 0
    package var bendDown: Double = 0
    /// Volume, expression and pan controllers steer it (`"channelControllers": false` turns
    /// that off).
    package var followsChannelControllers = true
    /// Each voice through this filter (`"filter"`; its `sampleRate` is set where the patch loads).
    package var filter: VoiceFilter?
    /// Seconds between a trigger and its sound (`"delay"`; SFZ's `delay`): the samples begin with
    /// that much silence, and the envelope waits as long.
    package var delay: Double = 0
    /// Up to this many seconds more, drawn per trigger (`"random": {"delay"}`; SFZ's
    /// `delay_random`): the samples begin with `delay + randomDelay` of silence, and each
    /// trigger starts a random part of the way into it.
    package var randomDelay: Double = 0
    /// dB per second: a note-off instrument (`"trigger": "noteOff"`) sounds this much quieter for
    /// each second its note was held (`"heldDecay"`; SFZ's `rt_decay`).
    package var heldDecay: Double = 0
    /// One-way chokes (`"group"`, `"offBy"`; see `InstrumentDefinition.group`).
    package var group: Int?
    package var offBy: Int?
    /// Plays nothing: its triggers only choke (`"silent": true`).
    package var isSilent = false
    /// Each trigger's level up by a random 0 … dB, its pitch moved by a random 0 … cents
    /// (`"random": { "gainDb": G, "cents": C }`; SFZ's `amp_random`, `pitch_random`).
    package var randomGainDb: Double = 0
    package var randomCents: Double = 0
    /// Each trigger starts its samples a random 0 … `randomOffset` frames in (`"random": {"offset"}`;
    /// SFZ's `offset_random`, frames of the file, played as frames at the engine's rate).
    package var randomOffset: Int = 0

    /// Why `name` cannot name an output, or nil (`Engine.outputNameProblem`).
    package static func outputNameProblem(_ name: String) -> String? { Engine.outputNameProblem(name) }

    package init(id: String, layers: [DrumLayer], gainDb: Double = 0, pan: Double = 0, tune: Double = 0, loops: Int = 0,
                midiNote: Int? = nil, chokeGroup: Int = 0, voices: Int = 1, sharesNote: Bool = false) {
        self.sharesNote = sharesNote
        self.id = id
        self.layers = layers
        self.gainDb = gainDb
        self.pan = pan
        self.tune = tune
        self.loops = loops
        self.midiNote = midiNote
        self.chokeGroup = chokeGroup
        self.voices = voices
    }
}

extension Patch {
    /// The notes whose note-ons and note-offs change what instruments' conditions read (key
    /// switches, `keyDown`/`keyUp` keys, the notes of instruments with a `heldDecay`; every note
    /// when some instrument has a `previousKey` or `legato`):
    /// each is sent to the engine as `Command.ChannelMessage.noteOn`/`noteOff` besides its
    /// triggers.
    package var stateNotes: Set<Int> {
        if instruments.contains(where: { $0.previousKey != nil || $0.legato != nil }) { return Set(0..<128) }
        return Set(instruments.flatMap { [$0.keySwitch, $0.keyDown, $0.keyUp].compactMap { $0 } })
            .union(heldDecayNotes)
    }

    /// The notes of instruments with a `heldDecay`.
    private var heldDecayNotes: [Int] {
        guard instruments.contains(where: { $0.heldDecay > 0 }) else { return [] }
        let notes = resolvedMIDINotes
        return instruments.indices.compactMap { instruments[$0].heldDecay > 0 ? notes[$0] : nil }
    }
}

/// A named step pattern.
package struct DrumPattern: Equatable, Sendable {
    package var name: String
    package var beatsPerBar: Int
    /// Steps per quarter note.
    package var stepsPerBeat: Int
    package var bars: Int
    /// Steps in one play: `beatsPerBar × stepsPerBeat × bars` unless the pattern ends inside its
    /// last bar (a version 1 pattern of any length; `"stepCount"` in a patch).
    package var stepCount: Int
    /// One per instrument that plays in the pattern.
    package var tracks: [DrumTrack]
    /// Percent of a step by which every second step of a pair is delayed (0 = straight).
    package var swing: Double
    /// Seeds the probability draws.
    package var seed: UInt64
    package var humanize: Humanize?

    package init(name: String, beatsPerBar: Int = 4, stepsPerBeat: Int = 4, bars: Int = 1, tracks: [DrumTrack],
                swing: Double = 0, seed: UInt64 = 1, humanize: Humanize? = nil, stepCount: Int? = nil) {
        self.stepCount = stepCount ?? beatsPerBar * stepsPerBeat * bars
        self.name = name
        self.beatsPerBar = beatsPerBar
        self.stepsPerBeat = stepsPerBeat
        self.bars = bars
        self.tracks = tracks
        self.swing = swing
        self.seed = seed
        self.humanize = humanize
    }

    /// Whether the pattern fills its bars.
    package var fillsItsBars: Bool { stepCount == beatsPerBar * stepsPerBeat * bars }
}

/// What one instrument plays in a pattern.
package struct DrumTrack: Equatable, Sendable {
    /// Index into `Patch.instruments`.
    package var instrument: Int
    /// Per step, 0 (rest) … 127.
    package var velocities: [Int]
    /// Per step, the chance (0…1) a note plays.
    package var probabilities: [Double]

    package init(instrument: Int, velocities: [Int], probabilities: [Double]? = nil) {
        self.instrument = instrument
        self.velocities = velocities
        self.probabilities = probabilities ?? Array(repeating: 1, count: velocities.count)
    }
}

/// Seeded random deviations: up to ± `frames` in time and ± `velocity` in velocity.
package struct Humanize: Equatable, Sendable {
    package var seed: UInt64
    package var frames: Int
    package var velocity: Int

    package init(seed: UInt64, frames: Int, velocity: Int) {
        self.seed = seed
        self.frames = frames
        self.velocity = velocity
    }
}

/// Patterns in order, each repeated, at the kit's tempo or their own.
package struct Song: Equatable, Sendable {
    package struct Entry: Equatable, Sendable {
        /// Index into `Patch.patterns`.
        package var pattern: Int
        package var repeats: Int
        package var tempo: Double?

        package init(pattern: Int, repeats: Int = 1, tempo: Double? = nil) {
            self.pattern = pattern
            self.repeats = repeats
            self.tempo = tempo
        }
    }

    package var entries: [Entry]
    /// Start again at the end, or stop.
    package var loop: Bool

    package init(entries: [Entry], loop: Bool) {
        self.entries = entries
        self.loop = loop
    }
}

/// A kit's pan law for mono samples (stereo samples always pan as a balance).
package enum PanLawSetting: String, Equatable, Sendable, CaseIterable {
    /// −3 dB each side at the centre.
    case constantPower = "constant-power"
    /// Unity both sides at the centre, the far side falling linearly (Hydrogen 1.2's default).
    case balance
    /// Constant power for stereo samples too, each channel as a mono one (sfizz's law; an SFZ
    /// import's).
    case constantPowerStereo = "constant-power-stereo"

    /// The engine's law.
    package var kind: PanLawKind {
        switch self {
        case .constantPower: .constantPower
        case .balance: .balance
        case .constantPowerStereo: .constantPowerStereo
        }
    }
}
