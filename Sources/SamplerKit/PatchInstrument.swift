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
    /// Per player: the sound to start (nil when it streams), and its gain and pan gains.
    private let starts: [(sound: SoundID?, gain: Gain, pan: PanGains, loops: Int)]
    /// The streamed players (see `PatchStreams`), nil when none streams.
    private let streams: PatchStreams?

    /// Decodes every sound of `patch` at `sampleRate` and registers it with `engine`, except
    /// those only played by streamed players (`"stream": true`, or longer than
    /// `streaming.threshold` without `"preload": true`), whose files are opened for streaming.
    /// Throws the first sound file that cannot be loaded, naming it.
    public init(patch: Patch, sampleRate: Double, engine: Engine, streaming: PatchStreamingOptions = .init()) throws {
        self.patch = patch
        self.sampleRate = sampleRate
        guard patch.players.count <= engine.configuration.maxPlayers else {
            throw SamplerError("\(patch.file): players: too many players (\(patch.players.count); the engine has \(engine.configuration.maxPlayers))")
        }
        let streamed = try Self.streamedPlayers(of: patch, options: streaming)
        let loader = SoundFileLoader(targetSampleRate: sampleRate)
        // Refused before anything is decoded when the decoded sounds would exceed the budget.
        let decoded = patch.sounds.filter { entry in
            let users = patch.players.indices.filter { patch.players[$0].sound == entry.id }
            return users.isEmpty || !users.allSatisfy { streamed[$0] != nil }
        }.map(\.resolvedPath)
        do { try DecodeBudget.check(DecodeBudget.decodedBytes(of: decoded, sampleRate: sampleRate), what: "\(patch.file): its sounds") } catch {
            throw SamplerError("\(error)")
        }
        var ids: [String: SoundID] = [:]
        for entry in patch.sounds {
            let users = patch.players.indices.filter { patch.players[$0].sound == entry.id }
            if !users.isEmpty && users.allSatisfy({ streamed[$0] != nil }) { continue }
            let sound: Sound
            do { sound = try loader.load(path: entry.resolvedPath) } catch {
                throw SamplerError("\(patch.file): sounds.\(entry.id): \(error)")
            }
            ids[entry.id] = try engine.register(sound)
        }
        if streamed.isEmpty {
            streams = nil
        } else {
            let streams = PatchStreams(engine: engine, options: streaming)
            for (index, stream) in streamed.sorted(by: { $0.key < $1.key }) {
                let player = patch.players[index]
                try streams.add(player: index, id: player.id, file: stream.file, loops: player.loops, sampleRate: sampleRate,
                                preloadSeconds: stream.preloadSeconds)
            }
            self.streams = streams
        }
        starts = patch.players.enumerated().map { index, player in
            (streamed[index] == nil ? ids[player.sound] : nil, Gain(linear: Float(player.gain)), PanGains(pan: Float(player.pan)),
             player.loops)
        }
    }

    /// Per streamed player index: its opened file and the seconds to buffer.
    private static func streamedPlayers(of patch: Patch, options: PatchStreamingOptions) throws -> [Int: (file: StreamFile, preloadSeconds: Double)] {
        var result: [Int: (file: StreamFile, preloadSeconds: Double)] = [:]
        for (index, player) in patch.players.enumerated() where player.loading != .preload {
            guard let entry = patch.sound(id: player.sound) else { continue }
            if player.loading == .automatic && options.threshold == nil { continue }
            let file: StreamFile
            do { file = try StreamFile(path: entry.resolvedPath) } catch {
                throw SamplerError("\(patch.file): sounds.\(entry.id): \(error)")
            }
            if player.loading == .automatic && file.duration <= options.threshold! { continue }
            result[index] = (file, options.preloadSeconds)
        }
        return result
    }

    /// The command that starts player `trigger.player` on `trigger.frame`.
    public func command(for trigger: Trigger) -> Command {
        let s = starts[trigger.player]
        // A streamed player's ring holds its loops.
        let sound = s.sound ?? streams!.soundID(forTriggerOf: trigger.player, at: trigger.frame)
        return .start(player: trigger.player, sound: sound, at: trigger.frame, loops: s.sound == nil ? 0 : s.loops,
                      gain: Gain(linear: s.gain.linear * trigger.velocity), pan: s.pan)
    }

    /// Whether player `index` streams from disk.
    public func streams(player index: Int) -> Bool { starts[index].sound == nil }

    /// `source` as the feeder should use it: when players stream, each window first retires
    /// and tops up their rings (see `PatchStreams`).
    public func feederSource(_ source: any TriggerSource) -> any TriggerSource {
        guard let streams else { return source }
        return StreamServicingSource(inner: source, streams: streams)
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
