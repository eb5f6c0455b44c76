@testable import SamplerCore
import Testing

/// MIDI controllers on the device timeline: conditions chosen on the note's frame, key switches,
/// silent chokes, modulations that steer sounding voices on the controller's frame, the sustain
/// pedal, and the same output whatever the period's split.
@Suite struct ControllerTests {
    /// An engine with sounds of constant value 0.1 … 0.5 (hard left, so the left channel is the level).
    func engineWithKit() throws -> (Engine, [SoundID]) {
        let engine = Engine(configuration: .init(maxPlayers: 16))
        let ids = try [0.1, 0.2, 0.3, 0.4, 0.5].map { v in
            try engine.register(Sound(channels: [[Float](repeating: Float(v), count: 4000)], sampleRate: 48000))
        }
        return (engine, ids)
    }

    func midi(_ engine: Engine, _ bytes: [UInt8], at frame: Frame) {
        bytes.withUnsafeBufferPointer { engine.receiveMIDI($0.baseAddress!, count: bytes.count, at: frame) }
    }

    func instrument(_ player: Int, _ sound: SoundID, note: Int) -> InstrumentDefinition {
        InstrumentDefinition(firstPlayer: player, pan: -1, layers: [InstrumentLayer(sounds: [sound])], declickFrames: 0, midiNotes: [note])
    }

    @Test func aControllerRangeChoosesTheInstrumentOnTheNotesFrame() throws {
        let (engine, s) = try engineWithKit()
        var closed = instrument(0, s[0], note: 42), open = instrument(1, s[2], note: 42)
        closed.conditions = [ControllerRange(controller: 4, values: 61...127)]
        open.conditions = [ControllerRange(controller: 4, values: 0...29)]
        closed.group = 1; closed.offBy = 2
        open.group = 2; open.offBy = 1
        closed.chokeFadeFrames = 0; open.chokeFadeFrames = 0
        engine.setInstruments([closed, open])
        midi(engine, [0xB9, 4, 127], at: 0)
        midi(engine, [0x99, 42, 127], at: 10)     // pedal down: closed
        midi(engine, [0xB9, 4, 0], at: 50)
        midi(engine, [0x99, 42, 127], at: 60)     // pedal up: open (chokes the closed hat)
        midi(engine, [0xB9, 4, 45], at: 80)
        midi(engine, [0x99, 42, 127], at: 90)     // half way: neither, the open one rings on
        let out = renderBlocks(engine, periods: 1, blockSize: 120).left
        #expect(out[9] == 0 && abs(out[10] - 0.1) < 1e-6 && abs(out[59] - 0.1) < 1e-6)
        #expect(abs(out[60] - 0.3) < 1e-6 && abs(out[100] - 0.3) < 1e-6)
        #expect(events(engine).filter { $0.kind == .started }.map(\.player) == [0, 1])
    }

    @Test func aKeySwitchSelectsUntilAnotherIsPressedAndTheDefaultHoldsFirst() throws {
        let (engine, s) = try engineWithKit()
        var a = instrument(0, s[0], note: 46), b = instrument(1, s[1], note: 46)
        a.keySwitch = 12
        b.keySwitch = 13
        engine.setInstruments([a, b], controllers: ControllerSetup(keySwitch: 13))
        midi(engine, [0x90, 46, 127], at: 0)     // default 13: b
        midi(engine, [0x90, 12, 127], at: 20)    // switch to 12
        midi(engine, [0x90, 46, 127], at: 30)    // a
        let out = renderBlocks(engine, periods: 1, blockSize: 64).left
        #expect(abs(out[10] - 0.2) < 1e-6)
        #expect(abs(out[40] - 0.3) < 1e-6)    // both sound: 0.2 + 0.1
    }

    @Test func aSilentInstrumentChokesOneWayAndPlaysNothing() throws {
        let (engine, s) = try engineWithKit()
        var open = instrument(0, s[2], note: 46), chick = instrument(1, s[0], note: 44), pedal = instrument(2, s[4], note: 44)
        open.group = 2; open.offBy = -2
        pedal.group = -2; pedal.isSilent = true
        open.chokeFadeFrames = 0
        engine.setInstruments([open, chick, pedal])
        engine.receiveNoteOn(note: 46, velocity: 127, at: 0)
        engine.receiveNoteOn(note: 44, velocity: 127, at: 40)
        let out = renderBlocks(engine, periods: 1, blockSize: 100).left
        #expect(abs(out[39] - 0.3) < 1e-6)
        #expect(abs(out[40] - 0.1) < 1e-6 && abs(out[90] - 0.1) < 1e-6)    // the chick only; nothing of 0.5
        #expect(events(engine).filter { $0.kind == .started }.map(\.player) == [0, 1])
    }

    @Test func aModulationSteersASoundingVoiceOnTheControllersFrameWhateverTheSplit() throws {
        func run(blockSize: Int) throws -> [Float] {
            let (engine, s) = try engineWithKit()
            var i = instrument(0, s[4], note: 36)
            i.modulations = [ControllerModulation(controller: 1, target: .amplitude, depth: 1),
                             ControllerModulation(controller: 2, target: .pan, depth: 1)]
            engine.setInstruments([i], controllers: ControllerSetup(defaults: [1: 1]))
            midi(engine, [0x90, 36, 127], at: 5)
            midi(engine, [0xB0, 1, 0], at: 50)
            midi(engine, [0xB0, 1, 127], at: 70)
            midi(engine, [0xB0, 2, 127], at: 90)     // pan −1 + 1: centre
            midi(engine, [0xB0, 7, 50], at: 110)     // volume: (50/100)²
            return renderBlocks(engine, periods: 200 / blockSize, blockSize: blockSize).left
        }
        let a = try run(blockSize: 200)
        #expect(abs(a[5] - 0.5) < 1e-6 && abs(a[49] - 0.5) < 1e-6)
        #expect(abs(a[50]) < 1e-6 && abs(a[69]) < 1e-6)
        #expect(abs(a[70] - 0.5) < 1e-6 && abs(a[89] - 0.5) < 1e-6)
        #expect(abs(a[90] - 0.5 * 0.70710677) < 1e-6)
        #expect(abs(a[110] - 0.5 * 0.70710677 * 0.25) < 1e-5)
        #expect(try run(blockSize: 40) == a)
    }

    @Test func theOutputDoesNotDependOnThePeriodsSplit() throws {
        func run(blockSize: Int) throws -> [Float] {
            let (engine, s) = try engineWithKit()
            var i = instrument(0, s[4], note: 36)
            i.modulations = [ControllerModulation(controller: 1, target: .volume, depth: -12)]
            i.bendUp = 200
            i.bendDown = -200
            i.envelope = AmplitudeEnvelope(attackFrames: 30, decayFrames: 200, sustain: 0.5, releaseFrames: 100)
            engine.setInstruments([i])
            midi(engine, [0x90, 36, 100], at: 3)
            midi(engine, [0xB0, 1, 64], at: 41)
            midi(engine, [0xE0, 0, 96], at: 77)
            midi(engine, [0x80, 36, 0], at: 150)
            return renderBlocks(engine, periods: 512 / blockSize, blockSize: blockSize).left
        }
        let whole = try run(blockSize: 512)
        #expect(try run(blockSize: 64) == whole)
        #expect(try run(blockSize: 16) == whole)
        #expect(whole[400] == 0 && whole[100] != 0)
    }

    @Test func theSustainPedalHoldsNoteOffsUntilItGoesUp() throws {
        let (engine, s) = try engineWithKit()
        var i = instrument(0, s[4], note: 60)
        i.envelope = AmplitudeEnvelope(releaseFrames: 1)
        engine.setInstruments([i])
        midi(engine, [0xB0, 64, 127], at: 0)
        midi(engine, [0x90, 60, 127], at: 10)
        midi(engine, [0x80, 60, 0], at: 20)      // held by the pedal
        midi(engine, [0xB0, 64, 0], at: 60)      // released here
        let out = renderBlocks(engine, periods: 1, blockSize: 100).left
        #expect(abs(out[30] - 0.5) < 1e-6 && abs(out[59] - 0.5) < 1e-6)
        #expect(out[70] == 0)
    }

    @Test func allSoundOffSilencesAndProgramChangesAreCounted() throws {
        let (engine, s) = try engineWithKit()
        var i = instrument(0, s[4], note: 60)
        i.declickFrames = 8
        engine.setInstruments([i])
        midi(engine, [0x90, 60, 127], at: 0)
        midi(engine, [0xB0, 120, 0], at: 30)
        midi(engine, [0xC0, 5], at: 40)
        let out = renderBlocks(engine, periods: 1, blockSize: 100).left
        #expect(abs(out[29] - 0.5) < 1e-6 && out[38] == 0)
        #expect(engine.programChangeCount == 1)
    }

    @Test func anInstrumentListensOnItsChannelsOnly() throws {
        let (engine, s) = try engineWithKit()
        var i = instrument(0, s[4], note: 36)
        i.channels = 2...2
        engine.setInstruments([i])
        midi(engine, [0x90, 36, 127], at: 10)    // channel 1: not its
        midi(engine, [0x91, 36, 127], at: 40)    // channel 2
        let out = renderBlocks(engine, periods: 1, blockSize: 100).left
        #expect(firstNonZero(out) == 40)
    }

    @Test func aControllerTriggersAnInstrumentAsItMovesIntoItsRange() throws {
        let (engine, s) = try engineWithKit()
        var chick = instrument(0, s[4], note: 0)
        chick.midiNotes = []
        chick.controllerTrigger = ControllerRange(controller: 4, values: 0...10)
        chick.layers = [InstrumentLayer(sounds: [s[4]], velocityCurve: (0...127).map { _ in 1 })]
        engine.setInstruments([chick], controllers: ControllerSetup(defaults: [4: 1]))
        midi(engine, [0xB0, 4, 64], at: 10)      // outside: nothing
        midi(engine, [0xB0, 4, 5], at: 30)       // into the range: the chick
        let out = renderBlocks(engine, periods: 1, blockSize: 100).left
        #expect(firstNonZero(out) == 30)
        #expect(events(engine).filter { $0.kind == .started }.count == 1)
    }

    @Test func aCentredBendLeavesThePitchAloneAndPressureIsKept() throws {
        let (engine, s) = try engineWithKit()
        var i = instrument(0, s[4], note: 36)
        i.bendUp = 200
        i.bendDown = -200
        engine.setInstruments([i])
        midi(engine, [0xE0, 0, 64], at: 0)       // 8192: the centre
        midi(engine, [0xD0, 99], at: 1)
        midi(engine, [0xA0, 36, 42], at: 2)
        midi(engine, [0x90, 36, 127], at: 5)
        _ = renderBlocks(engine, periods: 1, blockSize: 64)
        #expect(engine.voices[0].rate == 1 && !engine.voices[0].isVarispeed)
        #expect(engine.controllers.channelPressure[0] == Float(99) / 127)
        #expect(engine.controllers.polyPressure[36] == Float(42) / 127)
        #expect(Command.bendLevel(8192) == 0.5 && Command.bendLevel(0) == 0 && Command.bendLevel(16383) == 1)
    }

    @Test func aControllerOnAChannelBeyondThePlayersIsAControllerNotAPlayer() throws {
        // The channel sits where a player's number does: an engine of one player takes channel 16.
        let engine = Engine(configuration: .init(maxPlayers: 1))
        #expect(engine.send(.channelMessage(Command.ChannelMessage.programChange, channel: 16, value: 0, note: 5, at: 0)))
        #expect(engine.send(.controller(channel: 10, number: 7, value: 1, at: 0)))
        _ = renderBlocks(engine, periods: 1, blockSize: 64)
        #expect(engine.programChangeCount == 1)
    }

    @Test func sostenutoHoldsTheNotesDownWhenPressedAndAnotherPedalMaySustain() throws {
        let (engine, s) = try engineWithKit()
        var a = instrument(0, s[0], note: 60), b = instrument(1, s[1], note: 62), c = instrument(2, s[3], note: 64)
        a.envelope = AmplitudeEnvelope(releaseFrames: 1)
        b.envelope = AmplitudeEnvelope(releaseFrames: 1)
        c.envelope = AmplitudeEnvelope(releaseFrames: 1)
        c.sustainController = 67                  // the soft pedal's number sustains it
        engine.setInstruments([a, b, c])
        midi(engine, [0x90, 60, 127], at: 0)
        midi(engine, [0xB0, 66, 127], at: 10)     // sostenuto down while 60 is down
        midi(engine, [0x90, 62, 127], at: 20)     // pressed after: not held
        midi(engine, [0x80, 60, 0], at: 30)       // held by sostenuto
        midi(engine, [0x80, 62, 0], at: 40)       // released at once
        midi(engine, [0xB0, 66, 0], at: 70)       // 60 released here
        midi(engine, [0xB0, 67, 127], at: 100)
        midi(engine, [0x90, 64, 127], at: 110)
        midi(engine, [0xB0, 64, 127], at: 115)    // CC64 does not hold it
        midi(engine, [0x80, 64, 0], at: 120)      // held by CC67
        midi(engine, [0xB0, 67, 0], at: 150)
        let out = renderBlocks(engine, periods: 1, blockSize: 200).left
        #expect(abs(out[25] - 0.3) < 1e-6 && abs(out[50] - 0.1) < 1e-6 && abs(out[69] - 0.1) < 1e-6)
        #expect(out[80] == 0)
        #expect(abs(out[140] - 0.4) < 1e-6 && out[160] == 0)
    }

    @Test func keysDownUpAndPreviousChooseOnTheNotesFrame() throws {
        let (engine, s) = try engineWithKit()
        var down = instrument(0, s[0], note: 60), up = instrument(1, s[1], note: 60), after = instrument(2, s[3], note: 62)
        down.keyDown = 36
        up.keyUp = 36
        after.previousKey = 61
        engine.setInstruments([down, up, after])
        midi(engine, [0x90, 60, 127], at: 0)      // 36 up: `up`
        midi(engine, [0x90, 36, 127], at: 10)
        midi(engine, [0x90, 60, 127], at: 20)     // 36 down: `down`
        midi(engine, [0x80, 36, 0], at: 30)
        midi(engine, [0x90, 60, 127], at: 40)     // up again: `up`
        midi(engine, [0x90, 62, 127], at: 50)     // previous note 60: nothing
        midi(engine, [0x90, 61, 127], at: 60)
        midi(engine, [0x90, 62, 127], at: 70)     // previous note 61: `after`
        _ = renderBlocks(engine, periods: 1, blockSize: 100)
        let started = events(engine).filter { $0.kind == .started }.map { ($0.player, $0.frame) }
        #expect(started.map(\.0) == [1, 0, 1, 2])
        #expect(started.map(\.1) == [0, 20, 40, 70])
    }

    @Test func bendAndPressureRangesAreConditions() throws {
        let (engine, s) = try engineWithKit()
        var bent = instrument(0, s[0], note: 60), pressed = instrument(1, s[1], note: 60), poly = instrument(2, s[2], note: 60)
        bent.conditions = [ControllerRange(controller: Controller.pitchBend, low: 0.5, high: 1)]
        pressed.conditions = [ControllerRange(controller: Controller.channelPressure, values: 64...127)]
        poly.conditions = [ControllerRange(controller: Controller.polyPressure, values: 100...127)]
        engine.setInstruments([bent, pressed, poly])
        midi(engine, [0x90, 60, 127], at: 0)          // none
        midi(engine, [0xE0, 0, 0x70], at: 10)         // bend well up
        midi(engine, [0x90, 60, 127], at: 20)         // bent
        midi(engine, [0xD0, 90], at: 30)
        midi(engine, [0xA0, 61, 127], at: 30)         // another key's pressure
        midi(engine, [0x90, 60, 127], at: 40)         // bent, pressed
        midi(engine, [0xA0, 60, 110], at: 50)
        midi(engine, [0x90, 60, 127], at: 60)         // all three
        _ = renderBlocks(engine, periods: 1, blockSize: 100)
        let started = events(engine).filter { $0.kind == .started }.map { ($0.player, $0.frame) }
        #expect(started.map(\.0) == [0, 0, 1, 0, 1, 2])
        #expect(started.map(\.1) == [20, 40, 40, 60, 60, 60])
    }

    @Test func aLevelChangeGlidesFromItsFrameWhateverTheSplit() throws {
        /// Note 36 at frame 0 on an instrument of level 0.5 modulated by CC1 (starting at 127)
        /// with `envelope`; `moves` of CC1.
        func run(_ envelope: AmplitudeEnvelope?, _ moves: [(Frame, UInt8)], blockSize: Int) throws -> [Float] {
            let (engine, s) = try engineWithKit()
            var i = instrument(0, s[4], note: 36)
            i.modulations = [ControllerModulation(controller: 1, target: .amplitude, depth: 1)]
            i.steerFrames = 64
            i.envelope = envelope
            engine.setInstruments([i], controllers: ControllerSetup(defaults: [1: 1]))
            midi(engine, [0x90, 36, 127], at: 0)
            for (frame, value) in moves { midi(engine, [0xB0, 1, value], at: frame) }
            return renderBlocks(engine, periods: 600 / blockSize, blockSize: blockSize).left
        }
        // No envelope: down to the floor over 64 frames, then back up from where the glide is.
        let plain = try run(nil, [(100, 0), (130, 127)], blockSize: 600)
        #expect(plain == (try run(nil, [(100, 0), (130, 127)], blockSize: 6)))
        #expect(abs(plain[100] - 0.5) < 1e-6 && abs(plain[116] - 0.375) < 1e-5)
        #expect(abs(plain[130] - 0.5 * (1 - 30.0 / 64)) < 1e-5 && abs(plain[162] - (plain[130] + 0.5) / 2) < 1e-5)
        #expect(abs(plain[194] - 0.5) < 1e-6 && abs(plain[300] - 0.5) < 1e-6)
        // At its sustain (0.5 of the level, reached at once): a glide, and the note-off's release
        // from where it is.
        let sustained = AmplitudeEnvelope(sustain: 0.5, releaseFrames: 1000)
        let atSustain = try run(sustained, [(100, 0)], blockSize: 600)
        #expect(atSustain == (try run(sustained, [(100, 0)], blockSize: 6)))
        #expect(abs(atSustain[100] - 0.25) < 1e-6 && abs(atSustain[132] - 0.125) < 1e-5 && atSustain[200] < 1e-4)
        // In its decay: one step on the frame, keeping the decay's shape.
        let decaying = AmplitudeEnvelope(decayFrames: 400, sustain: 0.5, releaseFrames: 1)
        let inDecay = try run(decaying, [(10, 64)], blockSize: 600)
        #expect(inDecay == (try run(decaying, [(10, 64)], blockSize: 6)))
        #expect(abs(inDecay[10] / inDecay[9] - 64.0 / 127) < 0.02)
    }

    /// `amp_random`/`pitch_random`: each trigger's level up by 0 … 6 dB and pitch up by
    /// 0 … 100 cents, drawn from its frame: spread over the range, the same whatever the split.
    @Test func randomLevelAndPitchAreDrawnFromTheTriggersFrame() throws {
        func run(blockSize: Int) throws -> [Float] {
            let engine = Engine(configuration: .init(maxPlayers: 4))
            let ramp = try engine.register(Sound(channels: [(0..<4000).map { Float($0) / 10_000 }], sampleRate: 48000))
            var i = instrument(0, ramp, note: 60)
            i.randomGainDb = 6
            i.randomCents = 100
            engine.setInstruments([i])
            for k in 0..<40 { midi(engine, [0x90, 60, 127], at: Frame(k * 100)) }
            return renderBlocks(engine, periods: 4000 / blockSize, blockSize: blockSize).left
        }
        let out = try run(blockSize: 4000)
        #expect(out == (try run(blockSize: 50)))
        // Each note's step from frame to frame on the ramp: level × rate × 1e-4.
        var factors: [Float] = []
        for k in 0..<40 {
            let step: Float = out[k * 100 + 2] - out[k * 100 + 1]
            factors.append(step / 1e-4)
        }
        // level × rate lies within 1 … 2 × 2^(1/12); the spread shows both draws vary.
        #expect(factors.allSatisfy { $0 >= 0.999 && $0 <= 2 * 1.06 })
        #expect(Set(factors.map { Int($0 * 100) }).count > 20)
        #expect(factors.max()! / factors.min()! > 1.5)
    }

    /// A key pressed again while the sustain pedal held its earlier note-off is down: sostenuto
    /// pressed then keeps it.
    @Test func sostenutoKeepsAKeyPressedAgainUnderTheSustainPedal() throws {
        let (engine, s) = try engineWithKit()
        var a = instrument(0, s[4], note: 60)
        a.envelope = AmplitudeEnvelope(releaseFrames: 1)
        engine.setInstruments([a])
        midi(engine, [0xB0, 64, 127], at: 0)
        midi(engine, [0x90, 60, 127], at: 10)
        midi(engine, [0x80, 60, 0], at: 20)       // held by the sustain pedal
        midi(engine, [0x90, 60, 127], at: 30)     // down again
        midi(engine, [0xB0, 66, 127], at: 40)     // sostenuto: keeps it
        midi(engine, [0x80, 60, 0], at: 50)
        midi(engine, [0xB0, 64, 0], at: 60)       // the sustain pedal lets go; sostenuto holds
        midi(engine, [0xB0, 66, 0], at: 90)
        let out = renderBlocks(engine, periods: 1, blockSize: 120).left
        #expect(abs(out[80] - 0.5) < 1e-6)
        #expect(out[100] == 0)
    }

    /// A MIDI Start (0xFA) is noted with its frame for the control side (`--follow-midi-start`);
    /// other system messages, and a Start with data bytes, are not.
    @Test func aMIDIStartIsNotedWithItsFrame() throws {
        let (engine, _) = try engineWithKit()
        #expect(engine.lastMIDIStartFrame == nil)
        midi(engine, [0xF8], at: 100)
        midi(engine, [0xFA, 0x00], at: 150)
        #expect(engine.lastMIDIStartFrame == nil)
        midi(engine, [0xFA], at: 300)
        #expect(engine.lastMIDIStartFrame == 300)
        midi(engine, [0xFC], at: 400)
        #expect(engine.lastMIDIStartFrame == 300)
    }
}
