import Foundation
import Patches
import SamplerCore
import Scheduling
import SoundFiles

/// What a drum kit plays: a song, one pattern, or whatever the kit suggests.
public enum DrumKitSelection: Equatable, Sendable {
    /// The song if the kit has one, else the first pattern.
    case automatic
    case pattern(String)
    case song
}

/// A version 2 patch as a live (or offline) program: its samples loaded and tuned at the
/// engine's rate, its instruments set on the engine, and its song or pattern fed as
/// `Command.trigger`s, which the render thread resolves to layers and voices (so a pattern step
/// and a MIDI note take the same path). Control thread only.
public struct DrumKitProgram: LiveProgram {
    public let kit: DrumKit
    /// The sections played and whether they loop.
    public let sections: [SongSection]
    public let loops: Bool
    /// A description of what plays, e.g. "song" or "pattern fill".
    public let selectionName: String
    private let session = Session()

    /// Where the sequencer started, for the status line (set by `makeFeeder`).
    private final class Session {
        var sampleRate = 48000.0
        var origin: Frame?
    }

    /// - Parameters:
    ///   - loop: nil: a song loops as the kit says, a pattern loops.
    ///   - tempo: replaces the kit's tempo and every song entry's.
    public init(kit: DrumKit, selection: DrumKitSelection = .automatic, loop: Bool? = nil, tempo: Double? = nil) throws {
        self.kit = kit
        func tempoOf(_ entry: Song.Entry?) -> Double { tempo ?? entry?.tempo ?? kit.tempo }
        var selection = selection
        if selection == .automatic { selection = kit.song != nil ? .song : .pattern(kit.patterns[0].name) }
        switch selection {
        case .song:
            guard let song = kit.song else { throw SamplerError("\(kit.file): --song: the patch has no \"song\"") }
            sections = song.entries.map { SongSection(pattern: $0.pattern, repeats: $0.repeats, tempo: tempoOf($0)) }
            loops = loop ?? song.loop
            selectionName = "song"
        case .pattern(let name):
            guard let index = kit.patternIndex(named: name) else {
                throw SamplerError("\(kit.file): --pattern: no pattern named \"\(name)\" (expected one of: \(kit.patterns.map(\.name).joined(separator: ", ")))")
            }
            sections = [SongSection(pattern: index, repeats: 1, tempo: tempoOf(nil))]
            loops = loop ?? true
            selectionName = "pattern \(name)"
        case .automatic:
            preconditionFailure()
        }
    }

    public var playerCount: Int { kit.instruments.reduce(0) { $0 + $1.voices } }
    public var title: String { "\(kit.file) (\(selectionName))" }

    public mutating func prepare(engine: Engine, sampleRate: Double) throws {
        session.sampleRate = sampleRate
        engine.setInstruments(try Self.loadInstruments(kit, engine: engine, sampleRate: sampleRate))
    }

    /// The sequencer of the selected song or pattern, its first step on `origin`.
    public func sequencer(origin: Frame, sampleRate: Double) -> SongSequencer {
        SongSequencer(patterns: kit.patterns.map(Self.sequencePattern), sections: sections, loops: loops,
                      sampleRate: sampleRate, origin: origin)
    }

    public func makeFeeder(origin: Frame) -> CommandFeeder {
        session.origin = origin
        return CommandFeeder(source: sequencer(origin: origin, sampleRate: session.sampleRate), makeCommand: Self.command)
    }

    /// "bar 2.3  fill".
    public func status(at frame: Frame) -> String {
        guard let origin = session.origin,
              let p = sequencer(origin: origin, sampleRate: session.sampleRate).position(at: frame) else { return "" }
        return "bar \(p.bar).\(p.beat)  \(p.pattern)"
    }

    /// The trigger of instrument `trigger.player` at its velocity (0…1 → 1…127).
    public static func command(for trigger: Trigger) -> Command {
        .trigger(instrument: trigger.player, velocity: max(1, min(127, Int((trigger.velocity * 127).rounded()))), at: trigger.frame)
    }

    static func sequencePattern(_ p: DrumPattern) -> SequencePattern {
        SequencePattern(name: p.name, beatsPerBar: p.beatsPerBar, stepsPerBeat: p.stepsPerBeat, stepCount: p.stepCount,
                        tracks: p.tracks.map { SequenceTrack(instrument: $0.instrument, velocities: $0.velocities,
                                                             probabilities: $0.probabilities) },
                        swing: p.swing, seed: p.seed, humanize: p.humanize.map { ($0.seed, $0.frames, $0.velocity) })
    }

    /// Loads every sample at `sampleRate` (tuned by resampling), registers it with `engine` and
    /// returns the instruments, players allocated in file order, `voices` each.
    public static func loadInstruments(_ kit: DrumKit, engine: Engine, sampleRate: Double) throws -> [InstrumentDefinition] {
        let loader = SoundFileLoader(targetSampleRate: sampleRate)
        let paths = kit.instruments.flatMap { $0.layers.flatMap { $0.samples.map(\.resolvedPath) } }
        do { try DecodeBudget.check(DecodeBudget.decodedBytes(of: paths, sampleRate: sampleRate), what: "\(kit.file): its samples") } catch {
            throw SamplerError("\(error)")
        }
        var cache: [String: SoundID] = [:]
        var untuned: [String: Sound] = [:]
        var definitions: [InstrumentDefinition] = []
        var nextPlayer = 0
        let notes = kit.resolvedMIDINotes
        for (i, instrument) in kit.instruments.enumerated() {
            var layers: [InstrumentLayer] = []
            for (l, layer) in instrument.layers.enumerated() {
                var ids: [SoundID] = []
                for (s, sample) in layer.samples.enumerated() {
                    let key = "\(instrument.tune)|\(sample.resolvedPath)"
                    if let id = cache[key] { ids.append(id); continue }
                    let place = "\(kit.file): instruments[\(i)].layers[\(l)].samples[\(s)]"
                    do {
                        let sound = try untuned[sample.resolvedPath] ?? loader.load(path: sample.resolvedPath)
                        untuned[sample.resolvedPath] = sound
                        let id = try engine.register(try tuned(sound, semitones: instrument.tune))
                        cache[key] = id
                        ids.append(id)
                    } catch {
                        throw SamplerError("\(place): \(error)")
                    }
                }
                let selection: SampleSelection = switch layer.selection {
                case .roundRobin: .roundRobin
                case .random(let seed): .random(seed: seed)
                }
                layers.append(InstrumentLayer(velocities: layer.velocities, sounds: ids, selection: selection,
                                              gain: Gain(decibels: layer.gainDb)))
            }
            definitions.append(InstrumentDefinition(
                firstPlayer: nextPlayer, voiceCount: instrument.voices, gain: Gain(decibels: instrument.gainDb),
                pan: Float(instrument.pan), loops: instrument.loops, chokeGroup: instrument.chokeGroup, layers: layers,
                declickFrames: Int((sampleRate * 0.002).rounded()), chokeFadeFrames: Int((sampleRate * 0.005).rounded()),
                midiNotes: notes[i].map { [$0] } ?? [],
                panLaw: kit.panLaw == .balance ? .balance : .constantPower))
            nextPlayer += instrument.voices
        }
        guard nextPlayer <= engine.configuration.maxPlayers else {
            throw SamplerError("\(kit.file): instruments: \(nextPlayer) voices in all; the engine has \(engine.configuration.maxPlayers) players")
        }
        return definitions
    }

    /// `sound` pitched by `semitones`: resampled from rate r to r / 2^(semitones/12) and then
    /// played at r, so that the callback never resamples.
    static func tuned(_ sound: Sound, semitones: Double) throws -> Sound {
        guard semitones != 0 else { return sound }
        let rate = sound.sampleRate
        let channels = (0..<sound.channelCount).map { sound.samples(channel: $0) }
        let shifted = try Resampler.resample(channels, from: rate, to: rate / Double.pow(2, semitones / 12))
        return try Sound(channels: shifted, sampleRate: rate, memory: HugePageSampleMemory.shared)
    }
}
