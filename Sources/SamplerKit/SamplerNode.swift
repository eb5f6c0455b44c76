import DrumPlayer
import Foundation
import Patches
import SamplerCore
import SFZ

/// A kit on the session, played by MIDI notes, controllers, pitch bend and pressure on their
/// frames: a patch (JSON, versions 1 and 2) or an SFZ file, decoded into memory
/// (AVAudioUnitSampler's role, with AVAudioUnitMIDIInstrument's calls).
///
/// Each call takes the frame it is for (`at`: nil, the earliest frame the engine can still
/// play; an `AudioTime` with a sample time, that frame on the device clock) and acts on it as a
/// MIDI message on `midi_in` or in a MIDI file acts: the same commands, so that a sequence sent
/// here renders as the same MIDI played by `sampler play --midi` would. A call that reaches the
/// render thread after its frame acts on the first frame it can, counted in
/// `AudioSession.lostAudio.lateCommands`. Channels are 0…15 (MIDI's 1…16).
///
/// A session holds one SamplerNode at a time (an engine plays one set of instruments); its
/// voices take `voiceCount` consecutive player slots from `AudioSession.Configuration.maxPlayers`.
/// Instruments that stream from disk (`"stream": true`) are not played by a SamplerNode: they
/// are refused when it loads; an instrument's `"output"` plays on the session's output of that
/// name (`Configuration.outputs`), or on the main mix when it has none. Dropping the node
/// forgets the notes it sent for later frames, swaps its instruments out and gives its memory
/// back once the render thread has let go of it (controllers it sent for later frames still
/// reach the engine's MIDI channels).
///
/// Threads: any; calls are serialized by the session's lock.
///
/// `@unchecked Sendable` by contract: everything it holds is set in `init` and only read after
/// (`loaded`'s control side is used under the session lock).
public final class SamplerNode: SessionMember, @unchecked Sendable {
    public let session: AudioSession
    /// How many instruments the kit has, and how many voices (player slots) they hold in all.
    public let instrumentCount: Int
    public let voiceCount: Int
    /// The kit's notes about what it imported (an SFZ file's opcodes that play differently or
    /// not at all), one line each.
    public let importNotes: [String]
    private let kit: Patch
    private let loaded: LoadedPatch
    private let firstPlayer: Int

    /// Loads the kit at `url` (a `.sfz` file, or a patch) into `session`, decoding its samples at
    /// the session's rate, and swaps its instruments in on the earliest frame the engine can
    /// play. Throws a one-line error naming the file and the place in it.
    public init(contentsOf url: URL, session: AudioSession) throws {
        let path = url.path
        var notes: [String] = []
        let kit: Patch
        if path.lowercased().hasSuffix(".sfz") {
            let imported: SFZImporter.Result
            do { imported = try SFZImporter.importSFZ(path: path) } catch { throw SamplerError("\(error)") }
            notes = imported.notes
            kit = imported.kit
        } else {
            do { kit = try PatchLoader.load(path: path) } catch { throw SamplerError("\(error)") }
        }
        if let i = kit.instruments.firstIndex(where: { $0.layers.contains { $0.samples.contains { $0.loading == .stream } } }) {
            throw SamplerError("\(path): instrument \(kit.instruments[i].id) streams from disk (\"stream\": true), which a SamplerNode does not play")
        }
        let voices = kit.instruments.reduce(0) { $0 + $1.voices }
        let first = try session.allocateInstrumentPlayers(voices, for: PlaceholderMember())
        // A kit dropped just before may still be swapping out (a frame or two of rendering).
        let deadline = Date().addingTimeInterval(2)
        while !session.lock.withLock({ session.held.engine.instrumentsReplaced }), Date() < deadline { usleep(1_000) }
        let loaded: LoadedPatch
        do {
            var options = PatchStreamingOptions()
            options.threshold = nil
            // Decoded without the session's lock (other players go on meanwhile); each sound is
            // registered, and the instruments swapped in, with it.
            let sampleRate = session.sampleRate
            loaded = try LoadedPatch(kit, engine: session.engine, sampleRate: sampleRate, streaming: options,
                                     outputs: session.configuration.outputs, firstPlayer: first,
                                     registering: ({ sound, continuation in try session.register(sound, continuation: continuation) }, { id in session.unregister(id) }))
            try session.lock.withLock {
                let held = session.held
                guard held.engine.replaceInstruments(loaded.definitions, controllers: kit.controllers, at: held.earliestStartFrame) else {
                    for id in loaded.soundIDs { held.engine.unregister(id) }
                    throw SamplerError("\(path): the session's engine did not take the instruments (its command queue is full, or it has not rendered since the last kit was dropped): load it again")
                }
            }
        } catch {
            for p in first..<(first + voices) { session.releasePlayer(p) }
            session.lock.withLock { session.held.releaseInstruments() }
            throw error
        }
        self.session = session
        self.kit = kit
        self.loaded = loaded
        importNotes = notes
        instrumentCount = kit.instruments.count
        voiceCount = voices
        firstPlayer = first
        session.lock.withLock {
            for p in first..<(first + voices) { session.held.replaceMember(p, with: self) }
        }
    }

    deinit {
        let (first, count, sounds, instruments) = (firstPlayer, voiceCount, loaded.soundIDs, instrumentCount)
        // The instruments go first (their swap waits for an earlier one to be handed back), with
        // the notes still waiting for their frames, then the slots and the sounds: the render
        // thread confirms that nothing refers to them.
        func unload(_ held: AudioSession.Held) {
            for i in 0..<instruments { held.send(.cancelPendingTriggers(instrument: i)) }
            guard held.engine.replaceInstruments([], at: held.earliestStartFrame) else {
                held.session.deferWork(unload)
                return
            }
            for p in first..<(first + count) { held.releaseSlot(p) }
            for id in sounds { held.unregister(id) }
            held.releaseInstruments()
        }
        session.deferWork(unload)
    }

    // MARK: MIDI

    /// A note-on of `note` (0…127) at `velocity` (1…127; 0 is a note-off): the instruments on
    /// that note start on the frame (a key switch note selects its instruments first). False
    /// for a value out of range or a full command queue.
    @discardableResult
    public func startNote(_ note: UInt8, withVelocity velocity: UInt8, onChannel channel: UInt8 = 0, at when: AudioTime? = nil) -> Bool {
        guard note < 128, velocity < 128, channel < 16 else { return false }
        return sendNote(Int(note), velocity: Int(velocity), channel: Int(channel), at: when)
    }

    /// A note-off of `note`: instruments with an envelope that follows note-offs release (the
    /// sustain pedal holds them), instruments played by note-offs start.
    @discardableResult
    public func stopNote(_ note: UInt8, onChannel channel: UInt8 = 0, at when: AudioTime? = nil) -> Bool {
        guard note < 128, channel < 16 else { return false }
        return sendNote(Int(note), velocity: 0, channel: Int(channel), at: when)
    }

    /// Controller `controller` (0…127) to `value` (0…127): its conditions, modulations, pedals
    /// and channel-mode messages as on `midi_in` (docs/sfz-and-midi.md names them).
    @discardableResult
    public func sendController(_ controller: UInt8, withValue value: UInt8, onChannel channel: UInt8 = 0, at when: AudioTime? = nil) -> Bool {
        return send(0xB0, channel, controller, value, at: when)
    }

    /// Pitch bend, 14 bits (0…16383; 8192 is the centre).
    @discardableResult
    public func sendPitchBend(_ bend: UInt16, onChannel channel: UInt8 = 0, at when: AudioTime? = nil) -> Bool {
        guard bend < 16384 else { return false }
        return send(0xE0, channel, UInt8(bend & 0x7F), UInt8(bend >> 7), at: when)
    }

    /// Channel pressure (aftertouch), 0…127.
    @discardableResult
    public func sendPressure(_ pressure: UInt8, onChannel channel: UInt8 = 0, at when: AudioTime? = nil) -> Bool {
        return send(0xD0, channel, pressure, 0, at: when)
    }

    /// Polyphonic pressure of key `key`, 0…127.
    @discardableResult
    public func sendPressure(forKey key: UInt8, withValue value: UInt8, onChannel channel: UInt8 = 0, at when: AudioTime? = nil) -> Bool {
        return send(0xA0, channel, key, value, at: when)
    }

    /// A program change: counted (`Engine.programChangeCount`) and otherwise ignored, as on
    /// `midi_in` (a kit is one program).
    @discardableResult
    public func sendProgramChange(_ program: UInt8, onChannel channel: UInt8 = 0, at when: AudioTime? = nil) -> Bool {
        return send(0xC0, channel, program, 0, at: when)
    }

    /// Any MIDI channel message (status 0x80…0xEF and its data bytes; the second is ignored by
    /// messages of one data byte). False for anything else: system messages, a channel beyond
    /// 15, data bytes of 128 or more.
    @discardableResult
    public func sendMIDIEvent(_ status: UInt8, _ data1: UInt8, _ data2: UInt8 = 0, at when: AudioTime? = nil) -> Bool {
        guard status >= 0x80, status < 0xF0, data1 < 0x80, data2 < 0x80 else { return false }
        switch status & 0xF0 {
        case 0x90: return sendNote(Int(data1), velocity: Int(data2), channel: Int(status & 0x0F), at: when)
        case 0x80: return sendNote(Int(data1), velocity: 0, channel: Int(status & 0x0F), at: when)
        default:
            return session.lock.withLock {
                let held = session.held
                guard let command = Command.channelMessage([status, data1, data2], at: held.frame(for: when)) else { return false }
                return held.send(command)
            }
        }
    }

    /// A message of `kind` (0xA0 … 0xE0) on `channel`; false for a channel beyond 15 (which
    /// would change the status byte's kind).
    private func send(_ kind: UInt8, _ channel: UInt8, _ data1: UInt8, _ data2: UInt8, at when: AudioTime?) -> Bool {
        guard channel < 16 else { return false }
        return sendMIDIEvent(kind | channel, data1, data2, at: when)
    }

    private func sendNote(_ note: Int, velocity: Int, channel: Int, at when: AudioTime?) -> Bool {
        session.lock.withLock {
            let held = session.held
            let commands = loaded.noteCommands(note: note, velocity: velocity, channel: channel + 1, kit: kit, at: held.frame(for: when))
            var sent = true
            for command in commands where !held.send(command) { sent = false }
            return sent
        }
    }

    // MARK: SessionMember

    func handle(_ event: Event, session: AudioSession) -> [() -> Void] { [] }
    func tick(session: AudioSession) -> [() -> Void] { [] }
    func interruptionBegan(session: AudioSession) -> [() -> Void] { [] }
    func interruptionEnded(session: AudioSession) -> [() -> Void] { [] }
}
