import Foundation
import JACKBackend
import JACKTestSupport
import MallocInterposerSwift
import SamplerCore
import Testing

/// The render path allocates nothing. malloc-interposer counts every allocation in the process,
/// on every thread, so these tests run in their own `swift test` invocation (see the Makefile)
/// and one at a time.
@Suite(.serialized) struct RenderAllocationTests {
    init() { MallocInterposerSwift.initialize() }

    @Test func renderingThousandsOfPeriodsWithDozensOfVoicesAllocatesNothing() throws {
        let engine = Engine(configuration: .init(maxPlayers: 64))
        // Ramped voices in groups too (on by default only in builds for AVX-512 CPUs).
        engine.groupsRampedVoices = true
        let mono = try engine.register(Sound(channels: [(0..<700).map { Float($0 % 50) / 50 }], sampleRate: 48000))
        let stereo = try engine.register(Sound(channels: [[Float](repeating: 0.1, count: 333), [Float](repeating: 0.2, count: 333)], sampleRate: 48000))
        let left = UnsafeMutablePointer<Float>.allocate(capacity: 256)
        let right = UnsafeMutablePointer<Float>.allocate(capacity: 256)
        defer { left.deallocate(); right.deallocate() }
        let periods = 4000

        ThreadAllocationCounter.start(on: pthread_self())
        MallocInterposerSwift.unhook()
        for period in 0..<periods {
            let start = Frame(period * 256)
            // Keep dozens of voices busy: starts, fades, stops and seeks inside the periods. The
            // commands are sent, and events drained, outside the counted region: that is the
            // control side; only the render call is counted.
            if period % 8 == 0 {
                for p in 0..<48 {
                    _ = engine.send(.start(player: p, sound: p % 2 == 0 ? mono : stereo, at: start + Frame(p * 5),
                                           loops: p % 3 == 0 ? -1 : 1, pan: .center))
                }
                _ = engine.send(.setGain(player: 3, Gain(linear: 0.2), fadeFrames: 500, at: start + 17))
                // A run of long fades: mixed four or two at a time.
                for p in 20..<28 { _ = engine.send(.setGain(player: p, Gain(linear: 0.4), fadeFrames: 4000, at: start + 3)) }
                _ = engine.send(.stop(player: 5, at: start + 100, fadeFrames: 64))
                _ = engine.send(.seek(player: 6, to: 10, at: start + 200))
                // Varispeed, meters and declicked restarts take their own paths through the mixer.
                _ = engine.send(.setRate(player: 7, 1.37, at: start + 30))
                _ = engine.send(.setMetering(player: 8, period % 16 == 0))
                _ = engine.send(.start(player: 9, sound: mono, at: start + 250, declickFrames: 64))
                if period % 16 == 0 { _ = engine.takeMeters(ofPlayer: 8) }
            }
            MallocInterposerSwift.hook()
            engine.render(frameCount: 256, periodStart: start, left: left, right: right)
            MallocInterposerSwift.unhook()
            engine.drainEvents { _ in }
        }

        let onThisThread = ThreadAllocationCounter.stop()
        #expect(onThisThread == 0, "allocations while rendering: \(onThisThread)")
        #expect(engine.periodCount == periods)
        #expect(engine.activeVoiceCount > 10)
    }

    @Test func theCounterSeesAllocations() {
        // The counting itself works: without this, a zero above could mean nothing was counted.
        MallocInterposerSwift.reset()
        MallocInterposerSwift.hook()
        var arrays: [[Int]] = []
        for i in 0..<100 { arrays.append([i, i + 1]) }
        MallocInterposerSwift.unhook()
        #expect(MallocInterposerSwift.getStatistics().mallocCount >= 100)
        #expect(arrays.count == 100)
        // And the per-thread counter sees them on this thread.
        ThreadAllocationCounter.start(on: pthread_self())
        var more: [[Int]] = []
        for i in 0..<100 { more.append([i]) }
        let counted = ThreadAllocationCounter.stop()
        #expect(counted >= 100)
        #expect(more.count == 100)
    }

    @Test func theRealJACKCallbackPathAllocatesNothing() throws {
        let server = try JACKServer(period: 64)
        defer { server.stop() }
        let engine = Engine(configuration: .init(maxPlayers: 72))
        let sound = try engine.register(Sound(channels: [(0..<4000).map { Float($0 % 100) / 100 }], sampleRate: 48000))
        // A sound streamed per voice: its head in memory, its tail read (below, on this thread)
        // into the tail buffers its voices take.
        let whole = try Sound(channels: [(0..<6000).map { Float($0 % 77) / 77 }], sampleRate: 48000)
        try engine.attachTailBuffers(count: 16, capacity: 6000, stereo: false)
        let headed = try engine.register(Sound(channels: [Array((0..<1001).map { Float($0 % 77) / 77 })], sampleRate: 48000),
                                         tail: TailSource(id: 0, frames: 6000, peak: 1))
        // Players 48…63: two instruments sharing note 36, one with an envelope and a velocity curve
        // (the SFZ paths: triggers, note-offs, envelope segments, shared notes).
        var modulated = InstrumentDefinition(firstPlayer: 56, voiceCount: 8, layers: [InstrumentLayer(sounds: [sound])], midiNotes: [36], output: 2)
        // Controllers: a condition, level/pan/pitch/cutoff modulations, a bend range.
        modulated.conditions = [ControllerRange(controller: 4, values: 0...100)]
        modulated.modulations = [ControllerModulation(controller: 1, target: .amplitude, depth: 1, curve: ControllerModulation.sfzCurve(4)),
                                 ControllerModulation(controller: 2, target: .pan, depth: 0.5),
                                 ControllerModulation(controller: 3, target: .pitch, depth: 100)]
        modulated.bendUp = 200
        modulated.bendDown = -200
        // A filter, its cutoff moved by CC1: coefficients computed on the render thread.
        modulated.filter = VoiceFilter(kind: .lowpass2, cutoff: 2000, resonance: 3, keytrack: 10, veltrack: 600, random: 100)
        modulated.modulations.append(ControllerModulation(controller: 1, target: .cutoff, depth: 1200))
        engine.setInstruments([
            InstrumentDefinition(firstPlayer: 48, voiceCount: 8, layers: [
                InstrumentLayer(velocities: 1...63, sounds: [sound], velocityCurve: (0...127).map { Float($0) / 127 }),
                InstrumentLayer(velocities: 64...127, sounds: [sound, sound]),
            ], midiNotes: [36], roundRobinAcrossLayers: true,
                                 envelope: AmplitudeEnvelope(attackFrames: 100, holdFrames: 50, decayFrames: 900, sustain: 0.3, releaseFrames: 700)),
            modulated,
            InstrumentDefinition(firstPlayer: 64, voiceCount: 8, layers: [InstrumentLayer(sounds: [headed])], midiNotes: [38]),
        ], controllers: ControllerSetup(defaults: [1: 1]))
        let tap = RecordTap(capacity: 1 << 20)
        // Two outputs beside the main mix: the process callback renders into six ports.
        let client = try JACKClient(name: "alloc", serverName: server.name, engine: engine, recordTap: tap, outputs: ["one", "two"])
        defer { client.close() }
        try client.activate()
        #expect(waitUntil(timeout: 5) { engine.periodCount > 10 })
        // Commands are sent before counting starts (sending is the control side); they take
        // effect inside the counted periods.
        let from = engine.renderedFrame + 4 * 64
        for p in 0..<48 {
            engine.send(.start(player: p, sound: sound, at: from + Frame(p * 37), loops: -1))
        }
        for p in stride(from: 0, to: 48, by: 3) { engine.send(.setOutput(player: p, 1 + p % 2, at: from + Frame(p * 101))) }
        for i in 0..<200 {
            engine.send(.setGain(player: i % 48, Gain(linear: 0.5), fadeFrames: 100, at: from + Frame(i * 97)))
        }
        for i in 0..<60 {
            engine.send(.trigger(instrument: i % 3, velocity: 1 + (i * 37) % 127, at: from + Frame(i * 211)))
            engine.send(.release(instrument: 0, at: from + Frame(i * 211 + 500)))
        }
        // Controllers every period: a sweep, pitch bend, the sustain pedal.
        for i in 0..<400 {
            let at = from + Frame(i * 64 + 17)
            engine.send(.controller(channel: 1, number: 1 + i % 4, value: Float(i % 128) / 127, at: at))
            engine.send(.channelMessage(Command.ChannelMessage.pitchBend, channel: 1, value: Float(i % 17) / 16, at: at + 5))
            if i % 50 == 0 { engine.send(.controller(channel: 1, number: 64, value: i % 100 == 0 ? 1 : 0, at: at + 9)) }
        }
        let target = engine.periodCount + 3000

        // Only JACK's process thread is counted: the callback runs there, and nothing else does.
        let processThread = try #require(client.processThread)
        ThreadAllocationCounter.start(on: processThread)
        var tails = 0
        while engine.periodCount < target {
            while let request = engine.nextTailRequest() {
                let memory = engine.tailBufferMemory(Int(request.buffer))
                memory.left.update(from: whole.left + Int(request.from), count: 6000 - Int(request.from))
                engine.finishTailRequest(request, filled: true)
                tails += 1
            }
            usleep(2_000)
        }
        let onProcessThread = ThreadAllocationCounter.stop()
        #expect(tails >= 15, "tails read: \(tails)")
        #expect(engine.tailUnderrunCount == 0 && engine.refusedTailCount == 0)
        #expect(onProcessThread == 0, "allocations on JACK's process thread over 3,000 periods: \(onProcessThread)")
        #expect(engine.activeVoiceCount == 48)
        #expect(tap.droppedFrameCount == 0)
    }
}
