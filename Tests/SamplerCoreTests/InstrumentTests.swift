import Foundation
import Testing
@testable import SamplerCore

@Suite struct InstrumentTests {
    func engineWithKit() throws -> (Engine, [SoundID]) {
        let engine = Engine(configuration: .init(maxPlayers: 8))
        // Sounds identifiable by their constant value.
        let ids = try [0.1, 0.2, 0.3, 0.4, 0.5].map { v in
            try engine.register(Sound(channels: [[Float](repeating: Float(v), count: 1000)], sampleRate: 48000))
        }
        return (engine, ids)
    }

    /// `offset_random`: each trigger starts a random 0 … N frames into its sample, drawn from its
    /// frame (the same live and offline), the rest of the sound after it in order.
    @Test func aRandomOffsetStartsEachTriggerWithinItsRange() throws {
        // Where a trigger on `frame` starts (frames into the sound), one trigger per engine.
        func start(_ frame: Frame) throws -> Int {
            let engine = Engine(configuration: .init(maxPlayers: 4))
            let id = try engine.register(rampSound(frames: 20_000))
            var i = InstrumentDefinition(firstPlayer: 0, pan: -1, layers: [InstrumentLayer(sounds: [id])], declickFrames: 0)
            i.randomOffsetFrames = 1_000
            engine.setInstruments([i])
            engine.send(.trigger(instrument: 0, velocity: 127, at: frame))
            let out = renderBlocks(engine, periods: 4, blockSize: 256).left
            return Int((out[Int(frame)] * 1000).rounded()) - 1
        }
        let starts = try [0, 300, 600, 901].map { try start(Frame($0)) }
        #expect(starts.allSatisfy { (0..<1_000).contains($0) })
        #expect(Set(starts).count == 4)
        #expect(try [0, 300, 600, 901].map { try start(Frame($0)) } == starts)
    }

    @Test func centrePanIsThePanLawAtZero() {
        #expect(PanGains(pan: 0) == PanGains.center)
    }

    @Test func velocityPicksTheLayerAndRoundRobinCycles() throws {
        let (engine, s) = try engineWithKit()
        engine.setInstruments([InstrumentDefinition(firstPlayer: 0, pan: -1, layers: [
            InstrumentLayer(velocities: 1...63, sounds: [s[0]]),
            InstrumentLayer(velocities: 64...127, sounds: [s[1], s[2]]),
        ], declickFrames: 0)])
        for (i, v) in [30, 127, 127, 127].enumerated() { engine.send(.trigger(instrument: 0, velocity: v, at: Frame(i * 100))) }
        let out = renderBlocks(engine, periods: 4, blockSize: 100).left
        // Gain follows velocity: value × velocity / 127.
        #expect(abs(out[0] - 0.1 * 30 / 127) < 1e-6)
        #expect(abs(out[100] - 0.2) < 1e-6)
        #expect(abs(out[200] - 0.3) < 1e-6)
        #expect(abs(out[300] - 0.2) < 1e-6)
    }

    /// An instrument's mix (OSC /sampler/gain and /sampler/pan) applies to its triggers from the
    /// command's frame on; what sounds keeps its own.
    @Test func anInstrumentsMixAppliesFromItsFrame() throws {
        let (engine, s) = try engineWithKit()
        engine.setInstruments([InstrumentDefinition(firstPlayer: 0, voiceCount: 4, pan: -1, layers: [InstrumentLayer(sounds: [s[1]])],
                                                    declickFrames: 0)])
        engine.send(.trigger(instrument: 0, velocity: 127, at: 0))
        engine.send(.setInstrumentMix(instrument: 0, gain: Gain(linear: 0.5), pan: nil, at: 100))
        engine.send(.trigger(instrument: 0, velocity: 127, at: 100))
        engine.send(.setInstrumentMix(instrument: 0, gain: nil, pan: PanGains(pan: 1), at: 200))
        engine.send(.trigger(instrument: 0, velocity: 127, at: 200))
        let out = renderBlocks(engine, periods: 3, blockSize: 100)
        #expect(abs(out.left[50] - 0.2) < 1e-6)
        #expect(abs(out.left[150] - 0.3) < 1e-6)  // 0.2 at full gain, and 0.1 at half
        #expect(abs(out.left[250] - 0.3) < 1e-6 && abs(out.right[250] - 0.1) < 1e-6)  // the third on the right
    }

    /// `replaceInstruments` while rendering (a patch loaded over OSC): the render thread swaps
    /// the tables on the command's frame; one replacement at a time.
    @Test func instrumentsAreReplacedOnTheirFrameWhileRendering() throws {
        let (engine, s) = try engineWithKit()
        engine.setInstruments([InstrumentDefinition(firstPlayer: 0, pan: -1, layers: [InstrumentLayer(sounds: [s[0]])], declickFrames: 0)])
        engine.send(.trigger(instrument: 0, velocity: 127, at: 0))
        let first = renderBlocks(engine, periods: 1, blockSize: 100).left
        #expect(abs(first[50] - 0.1) < 1e-6)
        #expect(engine.replaceInstruments([InstrumentDefinition(firstPlayer: 0, pan: -1, layers: [InstrumentLayer(sounds: [s[2]])],
                                                                declickFrames: 0)], at: 150))
        #expect(!engine.instrumentsReplaced)
        // The previous replacement has not reached the render thread: refused.
        #expect(!engine.replaceInstruments([], at: 150))
        // Out of range, or an unregistered sound: refused.
        #expect(!engine.replaceInstruments([InstrumentDefinition(firstPlayer: 8, layers: [InstrumentLayer(sounds: [s[0]])])], at: 150))
        engine.send(.trigger(instrument: 0, velocity: 127, at: 120))
        engine.send(.trigger(instrument: 0, velocity: 127, at: 180))
        let out = renderBlocks(engine, periods: 1, blockSize: 100, start: 100).left
        #expect(abs(out[30] - 0.1) < 1e-6)  // frame 130: the old instrument
        #expect(abs(out[90] - 0.3) < 1e-6)  // frame 190: the new one
        #expect(engine.instrumentsReplaced)
        #expect(engine.replaceInstruments([], at: 300))
        engine.send(.trigger(instrument: 0, velocity: 127, at: 310))
        let after = renderBlocks(engine, periods: 2, blockSize: 100, start: 200).left
        #expect(abs(after[150] - 0.3) < 1e-6)  // no instrument 0 any more: the voice plays on, none starts
    }

    /// A replacement whose command is forgotten (a reset flushes the schedule) is made at once:
    /// the control thread counts on it and frees what it replaced.
    @Test func aFlushedReplacementIsMadeAtOnce() throws {
        let (engine, s) = try engineWithKit()
        engine.setInstruments([InstrumentDefinition(firstPlayer: 0, pan: -1, layers: [InstrumentLayer(sounds: [s[0]])], declickFrames: 0)])
        _ = renderBlocks(engine, periods: 1, blockSize: 100)
        #expect(engine.replaceInstruments([InstrumentDefinition(firstPlayer: 0, pan: -1, layers: [InstrumentLayer(sounds: [s[3]])],
                                                                declickFrames: 0)], at: 1_000_000))
        engine.send(Command(kind: .reset, player: 0, frame: Command.immediately))
        _ = renderBlocks(engine, periods: 1, blockSize: 100, start: 100)
        #expect(engine.instrumentsReplaced)
        engine.send(.trigger(instrument: 0, velocity: 127, at: 210))
        let out = renderBlocks(engine, periods: 1, blockSize: 100, start: 200).left
        #expect(abs(out[50] - 0.4) < 1e-6)
    }

    /// `cancelPendingTriggers` forgets one instrument's triggers from a frame on, and nothing else.
    @Test func cancellingTriggersKeepsOtherInstrumentsAndEarlierFrames() throws {
        let (engine, s) = try engineWithKit()
        engine.setInstruments([
            InstrumentDefinition(firstPlayer: 0, voiceCount: 2, pan: -1, layers: [InstrumentLayer(sounds: [s[0]])], declickFrames: 0),
            InstrumentDefinition(firstPlayer: 2, voiceCount: 2, pan: 1, layers: [InstrumentLayer(sounds: [s[1]])], declickFrames: 0),
        ])
        for f in [0, 100, 200] as [Frame] {
            engine.send(.trigger(instrument: 0, velocity: 127, at: f))
            engine.send(.trigger(instrument: 1, velocity: 127, at: f))
        }
        engine.send(.cancelPendingTriggers(instrument: 0, from: 100))
        let out = renderBlocks(engine, periods: 3, blockSize: 100)
        #expect(abs(out.left[250] - 0.1) < 1e-6)  // only the first trigger of instrument 0
        #expect(abs(out.right[250] - 0.4) < 1e-6)  // two voices of instrument 1 (the third stole the first)
    }

    @Test func aChokeGroupSilencesTheOtherWithinItsFade() throws {
        let (engine, s) = try engineWithKit()
        engine.setInstruments([
            InstrumentDefinition(firstPlayer: 0, pan: -1, chokeGroup: 1, layers: [InstrumentLayer(sounds: [s[3]])], chokeFadeFrames: 50),  // open hat
            InstrumentDefinition(firstPlayer: 1, pan: 1, chokeGroup: 1, layers: [InstrumentLayer(sounds: [s[0]])]),  // closed hat
        ])
        engine.send(.trigger(instrument: 0, velocity: 127, at: 0))
        engine.send(.trigger(instrument: 1, velocity: 127, at: 200))
        let out = renderBlocks(engine, periods: 4, blockSize: 100)
        #expect(abs(out.left[199] - 0.4) < 1e-6)
        #expect(out.left[249] > 0)
        #expect(out.left[250...].allSatisfy { $0 == 0 })
        #expect(abs(out.right[200] - 0.1) < 1e-6)
    }

    @Test func aChokeWithoutFadeStopsTheOtherOnTheTriggersFrame() throws {
        let (engine, s) = try engineWithKit()
        engine.setInstruments([
            InstrumentDefinition(firstPlayer: 0, pan: -1, chokeGroup: 1, layers: [InstrumentLayer(sounds: [s[3]])], chokeFadeFrames: 0),
            InstrumentDefinition(firstPlayer: 1, pan: 1, chokeGroup: 1, layers: [InstrumentLayer(sounds: [s[0]])]),
        ])
        engine.send(.trigger(instrument: 0, velocity: 127, at: 0))
        engine.send(.trigger(instrument: 1, velocity: 127, at: 200))
        let out = renderBlocks(engine, periods: 4, blockSize: 100)
        #expect(abs(out.left[199] - 0.4) < 1e-6)
        #expect(out.left[200...].allSatisfy { $0 == 0 })
        #expect(!engine.isActive(player: 0))
        #expect(events(engine).contains { $0.kind == .stopped && $0.player == 0 && $0.frame == 200 })
    }

    @Test func aPoolStealsTheOldestVoice() throws {
        let (engine, s) = try engineWithKit()
        engine.setInstruments([InstrumentDefinition(firstPlayer: 2, voiceCount: 2, pan: -1,
                                                    layers: [InstrumentLayer(sounds: [s[4]])], declickFrames: 0)])
        for f in [0, 10, 20] { engine.send(.trigger(instrument: 0, velocity: 127, at: Frame(f))) }
        let out = renderBlocks(engine, periods: 1, blockSize: 100).left
        #expect(abs(out[5] - 0.5) < 1e-6)
        #expect(abs(out[15] - 1.0) < 1e-6)   // two voices
        #expect(abs(out[25] - 1.0) < 1e-6)   // still two: the third stole the first
        #expect(events(engine).filter { $0.kind == .started }.map(\.player) == [2, 3, 2])
    }

    @Test func randomSelectionIsSeeded() throws {
        func run() throws -> [Float] {
            let (engine, s) = try engineWithKit()
            engine.setInstruments([InstrumentDefinition(firstPlayer: 0, pan: -1,
                layers: [InstrumentLayer(sounds: Array(s), selection: .random(seed: 42))], declickFrames: 0)])
            for i in 0..<20 { engine.send(.trigger(instrument: 0, velocity: 127, at: Frame(i * 10))) }
            let out = renderBlocks(engine, periods: 2, blockSize: 100).left
            return (0..<20).map { out[$0 * 10] }
        }
        let a = try run(), b = try run()
        #expect(a == b)
        #expect(Set(a).count >= 3)
    }

    @Test func midiNotesTriggerTheirInstrument() throws {
        let (engine, s) = try engineWithKit()
        engine.setInstruments([InstrumentDefinition(firstPlayer: 0, pan: -1, layers: [InstrumentLayer(sounds: [s[1]])],
                                                    declickFrames: 0, midiNotes: [36])])
        engine.receiveNoteOn(note: 36, velocity: 127, at: 70)
        engine.receiveNoteOn(note: 38, velocity: 127, at: 80)  // unmapped: ignored
        let out = renderBlocks(engine, periods: 1, blockSize: 100).left
        #expect(firstNonZero(out) == 70)
        #expect(events(engine).filter { $0.kind == .started }.count == 1)
    }

    @Test func aNoteSharedByInstrumentsPlaysThemAllAndTheirVelocityCurves() throws {
        let (engine, s) = try engineWithKit()
        // A squared curve on the first; the second linear (the default); the third on another note.
        let squared = (0...127).map { Float($0) / 127 * Float($0) / 127 }
        engine.setInstruments([
            InstrumentDefinition(firstPlayer: 0, pan: -1, layers: [InstrumentLayer(sounds: [s[1]], velocityCurve: squared)],
                                 declickFrames: 0, midiNotes: [36]),
            InstrumentDefinition(firstPlayer: 1, pan: 1, layers: [InstrumentLayer(sounds: [s[1]])], declickFrames: 0, midiNotes: [36]),
            InstrumentDefinition(firstPlayer: 2, pan: 1, layers: [InstrumentLayer(sounds: [s[1]])], declickFrames: 0, midiNotes: [38]),
        ])
        engine.receiveNoteOn(note: 36, velocity: 64, at: 70)
        let out = renderBlocks(engine, periods: 1, blockSize: 100)
        #expect(firstNonZero(out.left) == 70 && firstNonZero(out.right) == 70)
        #expect(events(engine).filter { $0.kind == .started }.map(\.player) == [0, 1])
        #expect(engine.midiNoteCount == 1)
        // Same sample, hard left and hard right: the levels differ by the curves.
        #expect(abs(out.left[70] / out.right[70] - Float(64) / 127) < 1e-6)
    }
}
