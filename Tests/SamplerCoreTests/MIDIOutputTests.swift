import Testing
@testable import SamplerCore

/// `Command.midi`: each message in the period that holds its frame, on that frame; a message due
/// in skipped frames or arriving late is not sent (a gap, never a shift); cancels withdraw it.
@Suite struct MIDIOutputTests {
    /// Renders one period of `n` frames stamped `start` and returns its MIDI messages.
    func period(_ engine: Engine, _ start: Frame, _ n: Int = 256) -> [MIDIMessage] {
        let l = UnsafeMutablePointer<Float>.allocate(capacity: n), r = UnsafeMutablePointer<Float>.allocate(capacity: n)
        defer { l.deallocate(); r.deallocate() }
        engine.render(frameCount: n, periodStart: start, left: l, right: r)
        return (0..<engine.midiOutputCount).map { engine.midiOutput(at: $0) }
    }

    @Test func messagesLeaveInThePeriodOfTheirFrameInOrder() {
        let engine = Engine(configuration: .init(maxPlayers: 1))
        engine.send(.midi([0xF8], at: 300))
        engine.send(.midi([0xF2, 1, 2], at: 10))
        engine.send(.midi([0xFA], at: 10))
        engine.send(.midi([0xF8], at: 511))
        #expect(period(engine, 0).map(\.frame) == [10, 10])
        let second = period(engine, 256)
        #expect(second.map(\.frame) == [300, 511] && second.map(\.byteArray) == [[0xF8], [0xF8]])
        #expect(period(engine, 512).isEmpty)
        #expect(engine.sentMIDICount == 4 && engine.lateMIDICount == 0)
        // The song position pointer kept its three bytes and the order it was sent in.
        let engine2 = Engine(configuration: .init(maxPlayers: 1))
        engine2.send(.midi([0xF2, 1, 2], at: 5))
        engine2.send(.midi([0xFA], at: 5))
        #expect(period(engine2, 0).map(\.byteArray) == [[0xF2, 1, 2], [0xFA]])
    }

    @Test func aMessageInSkippedFramesOrLateIsNotSent() {
        let engine = Engine(configuration: .init(maxPlayers: 1))
        _ = period(engine, 0)
        engine.send(.midi([0xF8], at: 300))   // in the period the server skips
        engine.send(.midi([0xF8], at: 600))
        // The next period is stamped 512: 256…511 were lost.
        #expect(period(engine, 512).map(\.frame) == [600])
        engine.send(.midi([0xF8], at: 700))   // arrives after its frame
        #expect(period(engine, 768).isEmpty)
        #expect(engine.sentMIDICount == 1 && engine.lateMIDICount == 2)
    }

    @Test func aCancelOfTheirPlayerWithdrawsThem() {
        let engine = Engine(configuration: .init(maxPlayers: 4))
        engine.send(.midi([0xF8], player: 3, at: 100))
        engine.send(.midi([0xF8], player: 3, at: 200))
        engine.send(.midi([0xF8], player: 0, at: 200))
        engine.send(.cancelPending(player: 3, from: 150))
        engine.send(.midi([0xFC], player: 3, at: 210))
        #expect(period(engine, 0).map(\.frame) == [100, 200, 210])
        // One to three bytes; more is refused on the control thread, not cut.
        #expect(!Command.midi([], at: 0).isValid && !Command.midi([1, 2, 3, 4], at: 0).isValid && Command.midi([1, 2, 3], at: 0).isValid)
    }
}
