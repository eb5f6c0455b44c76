import Testing
@testable import SamplerCore

/// `Command.midi`: each message in the period that holds its frame, on that frame; a note due in
/// skipped frames or arriving late is not sent (a gap, never a shift), a system message is sent
/// after them (a follower counts clock ticks); cancels withdraw them.
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

    /// A note due in skipped frames or arriving late is a gap; a clock tick (any system
    /// message) is never lost, since a follower counts them: due in skipped frames, it goes on
    /// the first frame after them, in order; late, at once (issue 34).
    @Test func aNoteInSkippedFramesOrLateIsNotSentAndAClockTickIsDeferred() {
        let engine = Engine(configuration: .init(maxPlayers: 1))
        _ = period(engine, 0)
        engine.send(.midi([0xF8], at: 300))   // in the periods the server skips
        engine.send(.midi([0x90, 60, 100], at: 310))
        engine.send(.midi([0xF8], at: 400))
        engine.send(.midi([0xFC], at: 500))
        engine.send(.midi([0xF8], at: 800))
        // The next period is stamped 768: 256…767 were lost.
        let after = period(engine, 768)
        #expect(after.map(\.frame) == [768, 768, 768, 800])
        #expect(after.map(\.byteArray) == [[0xF8], [0xF8], [0xFC], [0xF8]])
        engine.send(.midi([0xF8], at: 1000))   // arrives after its frame
        engine.send(.midi([0x80, 60, 0], at: 1001))
        let late = period(engine, 1024)
        #expect(late.map(\.byteArray) == [[0xF8]] && late.map(\.frame) == [1024])
        #expect(engine.sentMIDICount == 5 && engine.deferredMIDICount == 4 && engine.lateMIDICount == 2)
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
