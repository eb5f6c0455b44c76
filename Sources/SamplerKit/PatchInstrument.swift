import Patches
import SamplerCore
import Scheduling
import SoundFiles

/// A patch made playable: its sounds decoded (and resampled) at one rate and registered with an
/// engine, and its players' settings turned into ready-made start commands.
///
/// Control thread only.
public struct PatchInstrument {
    public let patch: Patch
    public let sampleRate: Double
    /// Per player: the sound to start, and its gain and pan gains.
    private let starts: [(sound: SoundID, gain: Gain, pan: PanGains, loops: Int)]

    /// Decodes every sound of `patch` at `sampleRate` and registers it with `engine`.
    /// Throws the first sound file that cannot be loaded, naming it.
    public init(patch: Patch, sampleRate: Double, engine: Engine) throws {
        self.patch = patch
        self.sampleRate = sampleRate
        let loader = SoundFileLoader(targetSampleRate: sampleRate)
        var ids: [String: SoundID] = [:]
        for entry in patch.sounds {
            let sound: Sound
            do { sound = try loader.load(path: entry.resolvedPath) } catch {
                throw SamplerError("\(patch.file): sounds.\(entry.id): \(error)")
            }
            ids[entry.id] = try engine.register(sound)
        }
        guard patch.players.count <= engine.configuration.maxPlayers else {
            throw SamplerError("\(patch.file): players: too many players (\(patch.players.count); the engine has \(engine.configuration.maxPlayers))")
        }
        starts = patch.players.map { player in
            (ids[player.sound]!, Gain(linear: Float(player.gain)), PanGains(pan: Float(player.pan)), player.loops)
        }
    }

    /// The command that starts player `trigger.player` on `trigger.frame`.
    public func command(for trigger: Trigger) -> Command {
        let s = starts[trigger.player]
        return .start(player: trigger.player, sound: s.sound, at: trigger.frame, loops: s.loops,
                      gain: Gain(linear: s.gain.linear * trigger.velocity), pan: s.pan)
    }

    /// The patch's pattern as a looping sequencer whose first step is on `origin`, or nil when the
    /// patch has no pattern. `tempo` overrides the patch's tempo.
    public func sequencer(origin: Frame, tempo: Double? = nil) -> StepSequencer? {
        guard let pattern = patch.pattern else { return nil }
        return StepSequencer(steps: pattern.steps, bpm: tempo ?? patch.tempo, stepsPerBeat: pattern.stepsPerBeat,
                             sampleRate: sampleRate, origin: origin)
    }
}

/// An error with a one-line message for the user.
public struct SamplerError: Error, CustomStringConvertible, Equatable {
    public let description: String
    public init(_ description: String) { self.description = description }
}
