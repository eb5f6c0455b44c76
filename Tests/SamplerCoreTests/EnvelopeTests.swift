import Testing
@testable import SamplerCore

/// Amplitude envelopes (SFZ's ampeg_*, shaped as sfizz shapes them) and note-offs.
@Suite struct EnvelopeTests {
    /// An engine with a constant sound (1.0, mono, 48,000 frames) on instrument 0 (note 36),
    /// hard left, with `envelope`.
    func engine(_ envelope: AmplitudeEnvelope, loops: Int = 0) throws -> Engine {
        let engine = Engine(configuration: .init(maxPlayers: 2))
        let id = try engine.register(Sound(channels: [[Float](repeating: 1, count: 48_000)], sampleRate: 48_000))
        engine.setInstruments([InstrumentDefinition(firstPlayer: 0, voiceCount: 2, pan: -1, loops: loops,
                                                    layers: [InstrumentLayer(sounds: [id])], declickFrames: 0,
                                                    midiNotes: [36], envelope: envelope)])
        return engine
    }

    @Test func attackHoldDecaySustainAndReleaseFollowTheirShapes() throws {
        let e = try engine(AmplitudeEnvelope(attackFrames: 1000, holdFrames: 500, decayFrames: 2000, sustain: 0.25, releaseFrames: 3000))
        engine_trigger(e, at: 0)
        e.send(.release(instrument: 0, at: 10_000))
        let out = renderBlocks(e, periods: 20, blockSize: 1000).left
        // The attack rises in a straight line; the hold keeps the full level.
        #expect(out[0] == 0 && abs(out[500] - 0.5) < 1e-6 && out[1000] == 1 && out[1499] == 1)
        // The decay falls by e^-9 over its time (straight segments between points of the curve)
        // and stops at the sustain level.
        let expected = Float(Double.exp(-9.0 * 100 / 2000))
        #expect(abs(out[1600] - max(0.25, expected)) < 0.003)
        #expect(out[5000] == 0.25 && out[9999] == 0.25)
        // The release falls from there by e^-9 over 3,000 frames; below -80 dB the voice stops.
        #expect(abs(out[11_500] - 0.25 * Float(Double.exp(-4.5))) < 0.001)
        #expect(out[19_999] == 0)
        #expect(events(e).contains { $0.kind == .stopped && $0.player == 0 })
    }

    func engine_trigger(_ e: Engine, at frame: Frame, velocity: Int = 127) {
        e.send(.trigger(instrument: 0, velocity: velocity, at: frame))
    }

    /// A delay held at the attack's start level, then the attack from that start at sfizz's pace
    /// (1 / attack per frame); the same whatever the period split.
    @Test func aDelayHoldsTheStartLevelThenTheAttackRisesFromIt() throws {
        func run(_ blockSize: Int) throws -> [Float] {
            let e = try engine(AmplitudeEnvelope(attackFrames: 1000, sustain: 1, releaseFrames: 100, delayFrames: 300, start: 0.4))
            engine_trigger(e, at: 0)
            return renderBlocks(e, periods: 4096 / blockSize, blockSize: blockSize).left
        }
        let out = try run(1024)
        #expect(out[0] == 0.4 && out[299] == 0.4)
        // 600 frames from 0.4 to 1: (1 − 0.4) × 1,000.
        #expect(abs(out[300 + 300] - 0.7) < 1e-6 && out[900] == 1 && out[2000] == 1)
        #expect(try run(64) == out)
    }

    /// An envelope moved by velocity (SFZ's `ampeg_vel2*`): each stage plus v / 127 of what
    /// velocity 127 adds, the attack taken at the end of the delay from the voice's own
    /// velocity, whatever the period split.
    @Test func theVelocityMovesEachStageAndTheAttackAfterADelayIsTheVoicesOwn() throws {
        var envelope = AmplitudeEnvelope(attackFrames: 200, sustain: 0.5, releaseFrames: 100, delayFrames: 100)
        envelope.velocity = EnvelopeVelocity(delayFrames: 254, attackFrames: 1016, holdFrames: 0, decayFrames: 0, sustain: 0.5, releaseFrames: 0)
        func run(_ blockSize: Int, velocity: Int) throws -> [Float] {
            let e = try engine(envelope)
            engine_trigger(e, at: 0, velocity: velocity)
            return renderBlocks(e, periods: 4096 / blockSize, blockSize: blockSize).left
        }
        // Velocity 127: a delay of 354 frames, an attack of 1,216, a sustain of 1.
        let loud = try run(1024, velocity: 127)
        #expect(loud[353] == 0 && abs(loud[354 + 608] - 0.5) < 1e-3 && loud[354 + 1216] == 1 && loud[3000] == 1)
        // Velocity 64 (64/127 of each): a delay of 228, an attack of 712, a sustain of 0.752.
        let soft = try run(1024, velocity: 64)
        #expect(soft[227] == 0 && abs(soft[228 + 356] - 0.5 * 64 / 127) < 2e-3 && abs(soft[3000] - (0.5 + 0.5 * 64 / 127) * 64 / 127) < 1e-3)
        #expect(try run(64, velocity: 127) == loud)
        #expect(try run(64, velocity: 64) == soft)
    }

    /// A kit replaced while a voice waits in its envelope's delay: the voice takes its attack
    /// from the instrument that started it, not from the new kit's instrument of that index.
    @Test func aVoiceInItsDelayKeepsItsOwnAttackWhenTheKitIsReplaced() throws {
        let e = try engine(AmplitudeEnvelope(attackFrames: 400, sustain: 1, releaseFrames: 100, delayFrames: 200, start: 0.5))
        engine_trigger(e, at: 0)
        _ = renderBlocks(e, periods: 1, blockSize: 100)
        let id = try e.register(Sound(channels: [[Float](repeating: 1, count: 100)], sampleRate: 48_000))
        // The new kit's instrument 0: an attack from 0 over 4,000 frames.
        #expect(e.replaceInstruments([InstrumentDefinition(firstPlayer: 1, layers: [InstrumentLayer(sounds: [id])], midiNotes: [37],
                                                           envelope: AmplitudeEnvelope(attackFrames: 4_000, sustain: 1, releaseFrames: 100))],
                                     at: 150))
        let out = renderBlocks(e, periods: 7, blockSize: 100, start: 100).left
        // Its own start level, then its own rise: 1 by frame 400 at the latest.
        #expect(out[0] == 0.5 && out[399] == 1 && out[599] == 1)
    }

    /// A voice taken over by the instrument's next note (polyphony) is released as its chokes
    /// are (SFZ's off_mode=time with off_time, as sfizz releases a voice it steals), not cut in
    /// the declick's 2 ms.
    @Test func aStolenVoiceFadesWithTheChokeRelease() throws {
        let e = Engine(configuration: .init(maxPlayers: 2))
        let id = try e.register(Sound(channels: [[Float](repeating: 1, count: 48_000)], sampleRate: 48_000))
        e.setInstruments([InstrumentDefinition(firstPlayer: 0, pan: -1, layers: [InstrumentLayer(sounds: [id])], declickFrames: 96,
                                               midiNotes: [36],
                                               envelope: AmplitudeEnvelope(releaseFrames: 100, chokeReleaseFrames: 4_800))])
        engine_trigger(e, at: 0)
        engine_trigger(e, at: 1_000)
        let out = renderBlocks(e, periods: 8, blockSize: 1_000).left
        // The new voice at 1, the old one falling by e^-9 over 4,800 frames: e^-4.5 half way.
        #expect(abs(out[1_000 + 2_400] - (1 + Float(Double.exp(-4.5)))) < 0.002)
        #expect(out[7_000] == 1)
    }

    @Test func theSamePeriodSplitGivesTheSameSamplesWhateverTheBlockSize() throws {
        func run(_ block: Int) throws -> [Float] {
            let e = try engine(AmplitudeEnvelope(attackFrames: 333, holdFrames: 77, decayFrames: 1234, sustain: 0.4, releaseFrames: 987))
            engine_trigger(e, at: 10)
            e.send(.release(instrument: 0, at: 2_500))
            engine_trigger(e, at: 3_001, velocity: 64)
            e.send(.release(instrument: 0, at: 3_900))
            return Array(renderBlocks(e, periods: (6_000 + block - 1) / block, blockSize: block).left.prefix(6_000))
        }
        let reference = try run(1000)
        for block in [32, 64, 100, 128, 250, 600] { #expect(try run(block) == reference, "block \(block)") }
    }

    @Test func aOneShotsEnvelopeIgnoresNoteOffsAndMIDINoteOffsReleaseTheOthers() throws {
        let oneShot = try engine(AmplitudeEnvelope(decayFrames: 4000, sustain: 0, releaseFrames: 100, followsNoteOff: false))
        engine_trigger(oneShot, at: 0)
        oneShot.send(.release(instrument: 0, at: 100))
        let a = renderBlocks(oneShot, periods: 2, blockSize: 1000).left
        #expect(a[500] > 0.3)
        let held = try engine(AmplitudeEnvelope(releaseFrames: 100))
        // A note-on and its note-off through MIDI (status 0x90 velocity 0 is a note-off too).
        held.receiveNoteOn(note: 36, velocity: 127, at: 0)
        [UInt8(0x90), 36, 0].withUnsafeBufferPointer { held.receiveMIDI($0.baseAddress!, count: 3, at: 200) }
        let b = renderBlocks(held, periods: 1, blockSize: 1000).left
        #expect(b[199] == 1 && b[250] < 0.2 && b[600] == 0)
    }

    @Test func aLateNoteOffReleasesFromWhereTheVoiceWasOnItsFrame() throws {
        func run(late: Bool) throws -> [Float] {
            let e = try engine(AmplitudeEnvelope(attackFrames: 200, decayFrames: 600, sustain: 0.5, releaseFrames: 400))
            engine_trigger(e, at: 0)
            if !late { e.send(.release(instrument: 0, at: 1_500)) }
            var out = renderBlocks(e, periods: 2, blockSize: 1000).left
            if late { e.send(.release(instrument: 0, at: 1_500)) }
            out += renderBlocks(e, periods: 2, blockSize: 1000, start: 2000).left
            return out
        }
        let onTime = try run(late: false), late = try run(late: true)
        // From the late release's arrival (frame 2,000) on, the two are the same.
        #expect(Array(late[2000...]) == Array(onTime[2000...]))
    }

    @Test func aReleaseTriggerPlaysOnTheNoteOffAtTheNoteOnsVelocity() throws {
        let engine = Engine(configuration: .init(maxPlayers: 2))
        let id = try engine.register(Sound(channels: [[Float](repeating: 1, count: 1_000)], sampleRate: 48_000))
        engine.setInstruments([
            InstrumentDefinition(firstPlayer: 0, pan: -1, layers: [InstrumentLayer(sounds: [id])], declickFrames: 0, midiNotes: [40],
                                 envelope: AmplitudeEnvelope(releaseFrames: 50)),
            InstrumentDefinition(firstPlayer: 1, pan: 1, layers: [InstrumentLayer(sounds: [id])], declickFrames: 0, midiNotes: [40],
                                 triggersOnNoteOff: true),
        ])
        engine.receiveNoteOn(note: 40, velocity: 64, at: 100)
        engine.receiveNoteOff(note: 40, at: 300)
        let out = renderBlocks(engine, periods: 1, blockSize: 1000)
        #expect(firstNonZero(out.left) == 100 && out.left[299] == Float(64) / 127 && out.left[700] == 0)
        #expect(firstNonZero(out.right) == 300 && out.right[300] == Float(64) / 127)
    }

    @Test func aDecayToSilenceEndsItsSegments() throws {
        let e = try engine(AmplitudeEnvelope(decayFrames: 480, sustain: 0, releaseFrames: 100, followsNoteOff: false))
        engine_trigger(e, at: 0)
        let out = renderBlocks(e, periods: 4, blockSize: 1000).left
        #expect(out[3999] == 0)
        // In sustain at 0: no segment left to play.
        #expect(e.voices[0].envStage == .sustain && e.voices[0].rampFramesLeft == 0)
    }

    // Review findings (stop 41): chokes within a note's stack, gain changes on envelopes, late
    // note-offs, choke releases without a fade.

    @Test func instrumentsOfOneNoteInOneChokeGroupDoNotChokeEachOther() throws {
        let engine = Engine(configuration: .init(maxPlayers: 4))
        let id = try engine.register(Sound(channels: [[Float](repeating: 1, count: 48_000)], sampleRate: 48_000))
        let layer = [InstrumentLayer(sounds: [id])]
        engine.setInstruments([
            // A two-microphone open hat (note 46) and its release noise, all in group 1 …
            InstrumentDefinition(firstPlayer: 0, pan: -1, chokeGroup: 1, layers: layer, declickFrames: 0, chokeFadeFrames: 10, midiNotes: [46]),
            InstrumentDefinition(firstPlayer: 1, pan: 1, chokeGroup: 1, layers: layer, declickFrames: 0, chokeFadeFrames: 10, midiNotes: [46]),
            InstrumentDefinition(firstPlayer: 2, pan: 1, chokeGroup: 1, layers: layer, declickFrames: 0, chokeFadeFrames: 10, midiNotes: [46],
                                 triggersOnNoteOff: true),
            // … and a closed hat (note 42) that chokes them.
            InstrumentDefinition(firstPlayer: 3, pan: 0, chokeGroup: 1, layers: layer, declickFrames: 0, chokeFadeFrames: 10, midiNotes: [42]),
        ])
        engine.receiveNoteOn(note: 46, velocity: 127, at: 0)
        engine.receiveNoteOff(note: 46, at: 100)
        engine.receiveNoteOn(note: 42, velocity: 127, at: 500)
        _ = renderBlocks(engine, periods: 1, blockSize: 1000)
        let e = events(engine)
        // Both microphones and the release noise sounded together until the closed hat.
        let stopped = e.filter { $0.kind == .stopped }.map { Int($0.player) }.sorted()
        #expect(stopped == [0, 1], "\(e)")
        #expect(engine.voices[0].endedAt == 510 && engine.voices[1].endedAt == 510)
        #expect(engine.voices[2].isActive && engine.voices[3].isActive)
    }

    @Test func aGainChangeDoesNotReviveAReleaseAndANoteOffReleasesAVoiceAGainChangeHeld() throws {
        // Released, then a gain change: the release goes on to its end.
        let a = try engine(AmplitudeEnvelope(releaseFrames: 2000), loops: -1)
        engine_trigger(a, at: 0)
        a.send(.release(instrument: 0, at: 1_000))
        a.send(.setGain(player: 0, Gain(linear: 1), fadeFrames: 10, at: 1_500))
        let outA = renderBlocks(a, periods: 6, blockSize: 1000).left
        #expect(outA[1_600] < outA[1_400] && outA[5_999] == 0)
        #expect(!a.voices[0].isActive)
        // A gain change while it sustains ends the envelope's shape, not the note-off's hold on it.
        let b = try engine(AmplitudeEnvelope(releaseFrames: 500), loops: -1)
        engine_trigger(b, at: 0)
        b.send(.setGain(player: 0, Gain(linear: 0.5), fadeFrames: 100, at: 200))
        b.send(.release(instrument: 0, at: 1_000))
        let outB = renderBlocks(b, periods: 3, blockSize: 1000).left
        #expect(outB[900] == 0.5 && outB[1_100] < 0.5 && outB[2_999] == 0)
        #expect(!b.voices[0].isActive)
    }

    @Test func lateNoteOffsThatCannotHaveTheirEffectAreCountedAndAVoiceTheyMissedIsReleased() throws {
        // The voice ended by itself (a 1,000-frame sample) before a late note-off for frame 500.
        let engine = Engine(configuration: .init(maxPlayers: 1))
        let id = try engine.register(Sound(channels: [[Float](repeating: 1, count: 1_000)], sampleRate: 48_000))
        engine.setInstruments([InstrumentDefinition(firstPlayer: 0, layers: [InstrumentLayer(sounds: [id])], declickFrames: 0,
                                                    envelope: AmplitudeEnvelope(releaseFrames: 100))])
        engine.send(.trigger(instrument: 0, velocity: 127, at: 0))
        _ = renderBlocks(engine, periods: 2, blockSize: 1000)
        engine.send(.release(instrument: 0, at: 500))
        _ = renderBlocks(engine, periods: 1, blockSize: 1000, start: 2000)
        #expect(engine.lateCommandCount == 1)
        // A trigger for frame 1,000 arriving after the note-off for frame 2,000 was applied:
        // released at once (and counted), not left to drone.
        let looped = try self.engine(AmplitudeEnvelope(releaseFrames: 100), loops: -1)
        looped.send(.release(instrument: 0, at: 2_000))
        _ = renderBlocks(looped, periods: 3, blockSize: 1000)
        looped.send(.trigger(instrument: 0, velocity: 127, at: 1_000))
        let out = renderBlocks(looped, periods: 2, blockSize: 1000, start: 3000).left
        #expect(looped.lateCommandCount == 1)
        #expect(out[0] > 0 && out[1_999] == 0 && !looped.voices[0].isActive)
    }

    @Test func aChokeReleaseSoundsEvenWhenTheChokeFadeIsZero() throws {
        let engine = Engine(configuration: .init(maxPlayers: 2))
        let id = try engine.register(Sound(channels: [[Float](repeating: 1, count: 48_000)], sampleRate: 48_000))
        let layer = [InstrumentLayer(sounds: [id])]
        engine.setInstruments([
            InstrumentDefinition(firstPlayer: 0, pan: -1, chokeGroup: 1, layers: layer, declickFrames: 0, chokeFadeFrames: 0,
                                 envelope: AmplitudeEnvelope(releaseFrames: 100, chokeReleaseFrames: 2_000)),
            InstrumentDefinition(firstPlayer: 1, pan: 1, chokeGroup: 1, layers: layer, declickFrames: 0, chokeFadeFrames: 0),
        ])
        engine.send(.trigger(instrument: 0, velocity: 127, at: 0))
        engine.send(.trigger(instrument: 1, velocity: 127, at: 1_000))
        let out = renderBlocks(engine, periods: 4, blockSize: 1000).left
        // Released over 2,000 frames (e^-9), not cut on the choke's frame.
        #expect(out[1_100] > 0.5 && out[1_100] < 1 && out[3_999] == 0)
    }
}
