/// A decoded patch file: which sounds exist, the players that play them, and an optional looping
/// pattern. Plain values only; loading the sound files is another module's job.
public struct Patch: Equatable, Sendable {
    /// The format version the file was written in.
    public var version: Int
    /// Quarter notes per minute.
    public var tempo: Double
    /// The sound files, sorted by id.
    public var sounds: [SoundEntry]
    /// The players in file order; `Pattern.steps` holds indices into this array.
    public var players: [PlayerEntry]
    /// The pattern to loop, if the patch has one.
    public var pattern: Pattern?
    /// The patch file, exactly as the caller named it (used in error messages).
    public var file: String

    public init(version: Int, tempo: Double, sounds: [SoundEntry], players: [PlayerEntry],
                pattern: Pattern?, file: String) {
        self.version = version
        self.tempo = tempo
        self.sounds = sounds
        self.players = players
        self.pattern = pattern
        self.file = file
    }

    /// The sound with this id, if the patch declares one.
    public func sound(id: String) -> SoundEntry? {
        sounds.first { $0.id == id }
    }
}

/// A sound file named by a patch.
public struct SoundEntry: Equatable, Sendable {
    /// The key under `sounds` in the patch.
    public var id: String
    /// The path exactly as written in the patch.
    public var path: String
    /// The absolute path: `path` itself if absolute, otherwise `path` resolved against the directory
    /// that holds the patch file.
    public var resolvedPath: String

    public init(id: String, path: String, resolvedPath: String) {
        self.id = id
        self.path = path
        self.resolvedPath = resolvedPath
    }
}

/// A player: one sound with its own gain, pan and looping.
public struct PlayerEntry: Equatable, Sendable {
    public var id: String
    /// The id of the `SoundEntry` it plays.
    public var sound: String
    /// Linear gain factor (1 = unity); a patch may give it in decibels, this is always linear.
    public var gain: Double
    /// Stereo position, -1 (hard left) … 1 (hard right).
    public var pan: Double
    /// How many times the sound repeats after the first play; -1 repeats forever.
    public var loops: Int
    /// Whether the sound is decoded into memory or streamed from disk.
    public var loading: Loading

    /// `"stream": true` / `"preload": true` in a patch; neither leaves the choice to the player's
    /// length (streamed above a threshold, 30 s by default).
    public enum Loading: Equatable, Sendable { case automatic, stream, preload }

    public init(id: String, sound: String, gain: Double = 1, pan: Double = 0, loops: Int = 0,
                loading: Loading = .automatic) {
        self.id = id
        self.sound = sound
        self.gain = gain
        self.pan = pan
        self.loops = loops
        self.loading = loading
    }
}

/// A looping step sequence. Its length is `steps.count` steps, which need not fill whole bars.
public struct Pattern: Equatable, Sendable {
    /// Steps per quarter note (4 = sixteenth notes).
    public var stepsPerBeat: Int
    public var beatsPerBar: Int
    /// For each step, the indices into `Patch.players` that play on it; empty for a rest.
    public var steps: [[Int]]

    public init(stepsPerBeat: Int = 4, beatsPerBar: Int = 4, steps: [[Int]]) {
        self.stepsPerBeat = stepsPerBeat
        self.beatsPerBar = beatsPerBar
        self.steps = steps
    }
}
