@testable import SamplerCore
import Testing

/// Sound memory is released only after the render thread has confirmed that nothing refers to
/// it (issue 34): never on a frame the control side predicts. Each test holds the sound only
/// weakly, so that its release is seen; under AddressSanitizer (`make asan`) a read of released
/// memory is reported as well.
@Suite struct SoundOwnershipTests {
    /// A sound made in a scope of its own: the engine holds the only strong reference.
    final class Held {
        weak var sound: Sound?
        let id: SoundID
        init(_ engine: Engine, frames: Int) throws {
            let sound = try rampSound(frames: frames)
            id = try engine.register(sound)
            self.sound = sound
        }
    }

    @Test func aLoopingVoiceKeepsItsSoundUntilItStops() throws {
        let engine = Engine()
        let held = try Held(engine, frames: 100)
        engine.send(.start(player: 0, sound: held.id, at: 0, loops: -1))
        _ = renderBlocks(engine, periods: 2, blockSize: 64)
        engine.unregister(held.id)
        // Far more than the two periods the old rule waited: the loop still plays it, whole.
        let out = renderBlocks(engine, periods: 40, blockSize: 64, start: 128)
        _ = events(engine)
        #expect(held.sound != nil)
        #expect(engine.retiringSoundCount == 1)
        #expect(out.left[0] != 0 && out.left.allSatisfy { $0 != 0 })
        // A new sound takes another slot meanwhile.
        let other = try engine.register(Sound(channels: [[0.25]], sampleRate: 48000))
        #expect(other != held.id)
        engine.send(.stop(player: 0))
        _ = renderBlocks(engine, periods: 1, blockSize: 64, start: 128 + 40 * 64)
        _ = events(engine)
        #expect(held.sound == nil)
        #expect(engine.retiringSoundCount == 0)
    }

    /// A voice of an instrument that loops until released plays a slice of a whole sample and,
    /// released, goes on in the whole (`register(_:continuation:)`): the whole's slot is kept as
    /// long as the slice's, and the released voice plays on past the loop to the end.
    @Test func aSoundsContinuationIsKeptWithItAndAReleaseGoesOnInIt() throws {
        let engine = Engine(configuration: .init(maxPlayers: 1))
        let whole = try rampSound(frames: 2000)
        let wholeID = try engine.register(whole)
        let sliceID = try engine.register(Sound(slicing: whole, from: 0, count: 100, loopStart: 50), continuation: wholeID)
        var definition = InstrumentDefinition(firstPlayer: 0, loops: -1, layers: [InstrumentLayer(sounds: [sliceID])], declickFrames: 0,
                                              midiNotes: [36], envelope: AmplitudeEnvelope(sustain: 1, releaseFrames: 100_000))
        definition.loopsUntilRelease = true
        engine.setInstruments([definition])
        engine.send(.trigger(instrument: 0, velocity: 127, at: 0))
        _ = renderBlocks(engine, periods: 2, blockSize: 64)
        engine.unregister(sliceID)
        engine.unregister(wholeID)
        // The instrument names the slice, the voice loops it: the slice is kept, and the whole
        // stays registered (the slice holds it).
        let looping = renderBlocks(engine, periods: 20, blockSize: 64, start: 128).left
        _ = events(engine)
        #expect(engine.retiringSoundCount == 1 && engine.registeredSoundCount == 1)
        #expect(looping.allSatisfy { $0 <= 0.1 * PanGains.center.monoLeft + 1e-6 })
        // Released on frame 1,408: from there it goes on in the whole, past frame 100 of it.
        engine.send(.release(instrument: 0, at: 1408))
        let after = renderBlocks(engine, periods: 40, blockSize: 64, start: 1408).left
        #expect(after.contains { $0 > 0.5 * PanGains.center.monoLeft })
        _ = events(engine)
        #expect(engine.retiringSoundCount == 1 && engine.registeredSoundCount == 1)
    }

    /// A sound's continuation stays registered while the sound is (it holds a registration of
    /// it), and is withdrawn once the sound's slot is released.
    @Test func aContinuationIsHeldByItsSoundUntilThatIsReleased() throws {
        let engine = Engine(configuration: .init(maxPlayers: 1))
        let whole = try rampSound(frames: 2000)
        let wholeID = try engine.register(whole)
        let sliceID = try engine.register(Sound(slicing: whole, from: 0, count: 100, loopStart: 50), continuation: wholeID)
        engine.unregister(wholeID)
        #expect(engine.registeredSoundCount == 2 && engine.retiringSoundCount == 0)
        engine.unregister(sliceID)
        _ = renderBlocks(engine, periods: 2, blockSize: 64)
        // The slice released, then the whole it held: both gone after the render thread's word.
        _ = engine.retiringSoundCount
        _ = renderBlocks(engine, periods: 2, blockSize: 64, start: 128)
        #expect(engine.retiringSoundCount == 0 && engine.registeredSoundCount == 0)
    }

    @Test func aPausedVoiceKeepsItsSoundAndResumesOnIt() throws {
        let engine = Engine()
        let held = try Held(engine, frames: 10_000)
        engine.send(.start(player: 0, sound: held.id, at: 0))
        _ = renderBlocks(engine, periods: 1, blockSize: 64)
        engine.send(Command(kind: .pause, player: 0, frame: Command.immediately))
        _ = renderBlocks(engine, periods: 1, blockSize: 64, start: 64)
        engine.unregister(held.id)
        _ = renderBlocks(engine, periods: 20, blockSize: 64, start: 128)
        _ = events(engine)
        #expect(held.sound != nil)
        engine.send(Command(kind: .resume, player: 0, frame: Command.immediately))
        let out = renderBlocks(engine, periods: 1, blockSize: 64, start: 22 * 64)
        // Paused at the start of the second period: frame 64 of the sound, (64 + 1) / 1000.
        #expect(abs(out.left[0] / PanGains.center.monoLeft - 0.065) < 1e-6, "\(out.left[0])")
    }

    @Test func aStartWaitingForItsFrameKeepsItsSound() throws {
        let engine = Engine()
        let held = try Held(engine, frames: 100)
        engine.send(.start(player: 0, sound: held.id, at: 1000))
        engine.unregister(held.id)
        _ = renderBlocks(engine, periods: 10, blockSize: 64)
        _ = events(engine)
        #expect(held.sound != nil)
        let out = renderBlocks(engine, periods: 7, blockSize: 64, start: 640)
        _ = events(engine)
        #expect(held.sound != nil)
        #expect(firstNonZero(out.left) == 1000 - 640)
        #expect(abs(out.left[1000 - 640 + 87] / PanGains.center.monoLeft - 0.088) < 1e-6)
        // It ends on frame 1100, in the next period.
        _ = renderBlocks(engine, periods: 1, blockSize: 64, start: 640 + 7 * 64)
        _ = events(engine)
        #expect(held.sound == nil)
    }

    @Test func anInstrumentNamingASoundKeepsItUntilItIsReplacedAndSilent() throws {
        let engine = Engine()
        let held = try Held(engine, frames: 1000)
        engine.setInstruments([InstrumentDefinition(firstPlayer: 0, layers: [InstrumentLayer(sounds: [held.id])])])
        engine.unregister(held.id)
        engine.send(.trigger(instrument: 0, velocity: 127, at: 10))
        _ = renderBlocks(engine, periods: 4, blockSize: 64)
        _ = events(engine)
        #expect(held.sound != nil)
        // Replaced on frame 600: the voice the trigger started still plays to frame 1010.
        #expect(engine.replaceInstruments([], at: 600))
        _ = renderBlocks(engine, periods: 11, blockSize: 64, start: 256)
        _ = events(engine)
        #expect(held.sound != nil)
        _ = renderBlocks(engine, periods: 1, blockSize: 64, start: 960)
        _ = events(engine)
        #expect(held.sound == nil)
    }

    /// A request that finds the command queue full is sent when there is room; the sound is
    /// kept meanwhile.
    @Test func aRequestTheQueueHadNoRoomForIsSentLater() throws {
        let engine = Engine(configuration: .init(commandCapacity: 4))
        let held = try Held(engine, frames: 10)
        while engine.send(.setGain(player: 1, .unity)) {}
        engine.unregister(held.id)
        _ = renderBlocks(engine, periods: 3, blockSize: 64)
        _ = events(engine)
        #expect(held.sound != nil)
        _ = renderBlocks(engine, periods: 1, blockSize: 64, start: 192)
        _ = events(engine)
        #expect(held.sound == nil)
    }

    /// A ring (or any sound kept registered) is confirmed unreferenced only once the voice
    /// reading it has stopped, however long that takes.
    @Test func aConfirmationWaitsForTheVoiceAndCoversOnlyEarlierCommands() throws {
        let engine = Engine()
        let sound = try rampSound(frames: 100)
        let id = try engine.register(sound)
        engine.send(.start(player: 0, sound: id, at: 0, loops: -1))
        let request = engine.requestUnreferenced(id)
        _ = renderBlocks(engine, periods: 30, blockSize: 64)
        #expect(!engine.isUnreferenced(request))
        engine.send(.stop(player: 0))
        _ = renderBlocks(engine, periods: 1, blockSize: 64, start: 30 * 64)
        #expect(engine.isUnreferenced(request))
        // A later start, then a later request: not confirmed while it plays.
        engine.send(.start(player: 1, sound: id, at: Command.immediately, loops: -1))
        let second = engine.requestUnreferenced(id)
        _ = renderBlocks(engine, periods: 2, blockSize: 64, start: 31 * 64)
        #expect(engine.isUnreferenced(request))
        #expect(!engine.isUnreferenced(second))
    }
}
