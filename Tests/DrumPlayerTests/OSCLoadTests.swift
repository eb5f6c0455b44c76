import Foundation
import JACKTestSupport
import Patches
import SamplerCore
@testable import DrumPlayer
import SoundFiles
import Sync
import Testing

/// `/sampler/load` reads and decodes on a thread of its own (issue 51): the old kit plays and
/// messages are answered meanwhile, the sender hears how far it got, and a newer load cancels
/// the one in flight. An engine without a device, rendered by hand between control ticks.
@Suite struct OSCLoadTests {
    /// The player's side: an engine playing `old.json`, its OSC interface, and the test's own
    /// OSC endpoint that sends to it and takes its replies.
    final class Rig {
        let dir: URL
        let engine = Engine(configuration: .init(maxPlayers: 64))
        let kit: Patch
        let loaded: LoadedPatch
        let osc: PatchOSC
        let me: OSCServer
        let player: String
        var frame: Frame = 0
        let left = UnsafeMutablePointer<Float>.allocate(capacity: 256)
        let right = UnsafeMutablePointer<Float>.allocate(capacity: 256)
        /// What came back so far.
        var replies: [OSCMessage] = []

        /// `rooted`: loads held to the rig's directory (`--osc-root`); `streaming`: the
        /// program's kit is loaded ready for loads that stream their tails.
        init(rooted: Bool = true, streaming: PatchStreamingOptions? = nil) throws {
            dir = try temporaryDirectory()
            try WAVFileWriter.write(path: dir.appendingPathComponent("click.wav").path, channels: [[Float](repeating: 0.5, count: 4800)],
                                    sampleRate: 48000)
            try WAVFileWriter.write(path: dir.appendingPathComponent("other.wav").path, channels: [[Float](repeating: 0.25, count: 4800)],
                                    sampleRate: 48000)
            try #"{"version": 2, "tempo": 120, "instruments": [{"id": "c", "layers": [{"samples": ["click.wav"]}]}, {"id": "d", "layers": [{"samples": ["other.wav"]}]}]}"#
                .write(to: dir.appendingPathComponent("c.json"), atomically: true, encoding: .utf8)
            for name in ["old", "a"] {
                try #"{"version": 2, "tempo": 120, "instruments": [{"id": "\#(name)", "layers": [{"samples": ["click.wav"]}]}]}"#
                    .write(to: dir.appendingPathComponent("\(name).json"), atomically: true, encoding: .utf8)
            }
            try "<region> sample=click.wav key=36\n<region> sample=CLICK.WAV key=38\n"
                .write(to: dir.appendingPathComponent("b.sfz"), atomically: true, encoding: .utf8)
            kit = try PatchLoader.load(path: dir.appendingPathComponent("old.json").path)
            loaded = try LoadedPatch(kit, engine: engine, sampleRate: 48000, streaming: streaming ?? .init(), readyForLoads: streaming != nil)
            engine.setInstruments(loaded.definitions, controllers: kit.controllers)
            let server = try OSCServer(port: "0", hostNow: { 1_000_000_000 })
            osc = PatchOSC(server: server, canLoad: true, root: rooted ? dir.path : nil) { _ in }
            osc.streaming = streaming
            me = try OSCServer(port: "0", hostNow: { 0 })
            player = "osc.udp://127.0.0.1:\(server.port)/"
        }

        deinit {
            left.deallocate()
            right.deallocate()
        }

        /// One control tick and one period.
        @discardableResult
        func tick() -> Float {
            let now = UInt64(frame / 48) * 1000 + 1_000_000_000
            osc.tick(kit: kit, loaded: loaded, engine: engine, sampleRate: 48000, hostNow: now,
                     frameAt: { Frame(min($0, 1 << 50) / 1000) * 48 })
            // Tails read before each period, as an offline render does (the filler every kit
            // loaded in its place shares).
            loaded.tailService?()
            engine.render(frameCount: 256, periodStart: frame, left: left, right: right)
            engine.drainEvents { _ in }
            frame += 256
            replies += me.take()
            return (0..<256).reduce(0) { max($0, abs(left[$1])) }
        }

        /// Ticks until a reply at `path` comes (the first one not yet taken), within 10 s.
        func await(_ path: String) -> OSCMessage? {
            let started = Date()
            while Date().timeIntervalSince(started) < 10 {
                if let i = replies.firstIndex(where: { $0.path == path }) { return replies.remove(at: i) }
                tick()
                usleep(1000)
            }
            return nil
        }

        func send(_ path: String, _ arguments: [OSCArgument] = []) { me.send(path, arguments, to: player) }

        /// Loads over OSC a kit of one instrument `id` playing `sample`, and returns it once
        /// swapped in (nil when it was not loaded).
        func load(instrument id: String, playing sample: String, looping loop: ClosedRange<Int>? = nil) throws -> LoadedPatch? {
            let path = dir.appendingPathComponent("\(id).json").path
            let named = loop.map { #"{"path": "\#(sample)", "loop": [\#($0.lowerBound), \#($0.upperBound)]}"# } ?? #""\#(sample)""#
            try #"{"version": 2, "tempo": 120, "instruments": [{"id": "\#(id)", "layers": [{"samples": [\#(named)]}]\#(loop == nil ? "" : #", "loops": -1"#)}]}"#
                .write(toFile: path, atomically: true, encoding: .utf8)
            send("/sampler/load", [.string(path)])
            guard self.await("/sampler/loaded")?.arguments == [.string(path), .int(1)] else { return nil }
            for _ in 0..<4 { tick() }
            return osc.replaced?.loaded
        }

        /// Whether each of the next `periods` periods peaks at `level`.
        func levelHolds(_ level: Float, periods: Int) -> Bool {
            (0..<periods).allSatisfy { _ in tick() == level }
        }

        /// Triggers instrument `id` and ticks until a period has sound in it (within 10 s):
        /// that period's peak.
        func trigger(_ id: String) -> Float {
            send("/sampler/trigger", [.string(id)])
            var heard: Float = 0
            let started = Date()
            while heard == 0, Date().timeIntervalSince(started) < 10 {
                heard = tick()
                usleep(1000)
            }
            return heard
        }
    }

    @Test func aLoadRunsBesideThePlayerAndANewerOneCancelsIt() throws {
        let rig = try Rig()
        let a = rig.dir.appendingPathComponent("a.json").path, b = rig.dir.appendingPathComponent("b.sfz").path
        // Load a is held on its thread until the test lets it go.
        let gate = DispatchSemaphore(value: 0)
        let started = DispatchSemaphore(value: 0)
        rig.osc.beforeLoading = { path in
            if path == a {
                started.signal()
                gate.wait()
            }
        }
        rig.send("/sampler/load", [.string(a)])
        while started.wait(timeout: .now()) == .timedOut { rig.tick(); usleep(1000) }
        // While it loads: pings are answered, the old kit plays, and progress is replied.
        rig.send("/sampler/ping")
        #expect(rig.await("/sampler/pong") != nil)
        let heard = rig.trigger("old")
        #expect(heard > 0.3, "the old kit stopped playing during the load")
        let progress = rig.await("/sampler/loading")
        #expect(progress?.arguments.first == .string(a), "\(String(describing: progress))")
        // A newer load cancels it: its sender is told, and the newer one is what comes in.
        rig.send("/sampler/load", [.string(b)])
        let cancelled = rig.await("/sampler/error")
        #expect(cancelled?.arguments == [.string(a), .string("\(a): cancelled by a load of \(b)")], "\(String(describing: cancelled))")
        gate.signal()
        let loaded = rig.await("/sampler/loaded")
        #expect(loaded?.arguments == [.string(b), .int(2)], "\(String(describing: loaded))")
        for _ in 0..<4 { rig.tick() }
        #expect(!rig.replies.contains { $0.path == "/sampler/loaded" }, "\(rig.replies)")
        rig.send("/sampler/query")
        #expect(rig.await("/sampler/instrument")?.arguments.last == .string("kick-36"))
    }

    /// Every sample streamed (its tail read per voice), four voices of tails, heads and rings as
    /// given (nil: the player's defaults).
    static func streaming(headFrames: Int? = nil, ringFrames: Int? = nil) -> PatchStreamingOptions {
        var streaming = PatchStreamingOptions()
        streaming.tailsAboveBytes = 0
        streaming.headFrames = headFrames
        streaming.tailVoices = 4
        streaming.tailRingFrames = ringFrames
        return streaming
    }

    /// A large kit loaded over OSC keeps only its samples' heads in memory and streams their
    /// tails per voice, as the program's kit would (its kit loaded ready for loads); a player
    /// not ready for it loads the kit whole.
    @Test(arguments: [true, false])
    func aLoadedLibraryStreamsItsTails(ready: Bool) throws {
        let rig = try Rig(streaming: ready ? Self.streaming(headFrames: 1024) : nil)
        try WAVFileWriter.write(path: rig.dir.appendingPathComponent("long.wav").path, channels: [[Float](repeating: 0.5, count: 48_000)],
                                sampleRate: 48000)
        let loaded = try #require(try rig.load(instrument: "l", playing: "long.wav"))
        #expect(loaded.streamsTails == ready)
        // A second long: the head is 1,024 frames, the note plays 48,000 at one level.
        let first = rig.trigger("l")
        #expect(first > 0.3)
        #expect(rig.levelHolds(first, periods: 150))
        #expect(rig.engine.tailUnderrunCount == 0)
        #expect((loaded.tailFramesRead > 30_000) == ready)
        // A kit that plays the same file the same way takes the head over: not read again (a
        // copy in its own memory), its tail streamed for the new kit's voices.
        let head = try #require(loaded.definitions[0].layers[0].sounds.first.map { rig.engine.sound($0) })
        let second = try #require(try rig.load(instrument: "m", playing: "long.wav"))
        #expect(second.streamsTails == ready)
        let taken = try #require(second.definitions[0].layers[0].sounds.first.map { rig.engine.sound($0) })
        #expect(second.takenOver == 1)
        #expect((taken === head) == !ready)
        #expect(taken.frameCount == head.frameCount && taken.samples(channel: 0) == head.samples(channel: 0))
        let level = rig.trigger("m")
        #expect(level == first)
        #expect(rig.levelHolds(first, periods: 150))
        #expect(rig.engine.tailUnderrunCount == 0)
    }

    /// A looped sample (looping forever) in a kit loaded over OSC streams from its file, and a
    /// kit that replaces it takes its head over and still reads the file: no sound made whole
    /// for a note's tail, before or after.
    @Test func aLoopedHeadTakenOverStillStreamsFromItsFile() throws {
        let rig = try Rig(streaming: Self.streaming(headFrames: 1024))
        try WAVFileWriter.write(path: rig.dir.appendingPathComponent("loop.wav").path, channels: [[Float](repeating: 0.5, count: 48_000)],
                                sampleRate: 48000)
        let loaded = try #require(try rig.load(instrument: "l", playing: "loop.wav", looping: 12_000...35_999))
        #expect(loaded.streamsTails)
        // Looping forever: still at its level well past the file's length (a second).
        let first = rig.trigger("l")
        #expect(first > 0.3)
        #expect(rig.levelHolds(first, periods: 600))
        #expect(rig.engine.tailUnderrunCount == 0)
        let second = try #require(try rig.load(instrument: "m", playing: "loop.wav", looping: 12_000...35_999))
        #expect(second.takenOver == 1)
        #expect(rig.trigger("m") == first)
        #expect(rig.levelHolds(first, periods: 600))
        #expect(rig.engine.tailUnderrunCount == 0)
        #expect(second.tailSoundsMadeWhole == 0)
    }

    /// A kit loaded over OSC whose patch asks for heads longer than a quarter of the tail rings
    /// the first kit sized (its heads, at least four to a ring) gets heads of a quarter ring, and
    /// its notes play their tails through those rings without a frame missed.
    @Test func aLoadedKitsHeadsFitTheRingsTheFirstKitSized() throws {
        let rig = try Rig(streaming: Self.streaming(ringFrames: 16_384))
        let capacity = rig.engine.tailBufferShape.capacity
        #expect(capacity == 4 * PatchStreamingOptions.defaultHeadFrames)
        try WAVFileWriter.write(path: rig.dir.appendingPathComponent("long.wav").path, channels: [[Float](repeating: 0.5, count: 96_000)],
                                sampleRate: 48000)
        let path = rig.dir.appendingPathComponent("h.json").path
        try #"{"version": 2, "tempo": 120, "headFrames": 20000, "instruments": [{"id": "h", "layers": [{"samples": ["long.wav"]}]}]}"#
            .write(toFile: path, atomically: true, encoding: .utf8)
        rig.send("/sampler/load", [.string(path)])
        #expect(rig.await("/sampler/loaded")?.arguments == [.string(path), .int(1)])
        for _ in 0..<4 { rig.tick() }
        let loaded = try #require(rig.osc.replaced?.loaded)
        #expect(loaded.streamsTails)
        let head = try #require(loaded.definitions[0].layers[0].sounds.first.map { rig.engine.sound($0) })
        #expect(head.frameCount == capacity / 4 + 1)
        let level = rig.trigger("h")
        #expect(level > 0.3)
        #expect(rig.levelHolds(level, periods: 300))
        #expect(rig.engine.tailUnderrunCount == 0)
    }

    /// A load reuses the sounds it shares with the kit it replaces (the same file played the
    /// same way): not decoded again, registered again (the old kit's withdrawal leaves them),
    /// and decoded anew once the file has changed on disk (a sample edited, then reloaded).
    @Test func aLoadReusesTheSoundsItSharesWithTheKitItReplaces() throws {
        let rig = try Rig(rooted: false)
        func sound(_ loaded: LoadedPatch?, _ instrument: Int = 0) -> Sound? {
            (loaded?.definitions[instrument].layers[0].sounds[0]).map { rig.engine.sound($0) }
        }
        let original = try #require(sound(rig.loaded))
        let a = rig.dir.appendingPathComponent("a.json").path, c = rig.dir.appendingPathComponent("c.json").path
        rig.send("/sampler/load", [.string(a)])
        #expect(rig.await("/sampler/loaded")?.arguments == [.string(a), .int(1)])
        for _ in 0..<4 { rig.tick() }
        #expect(sound(rig.osc.replaced?.loaded) === original, "the shared sound was decoded again")
        #expect(rig.engine.registeredSoundCount == 1)
        // It plays, from the kit that shares it.
        let heard = rig.trigger("a")
        #expect(heard > 0.3)
        rig.send("/sampler/load", [.string(c)])
        #expect(rig.await("/sampler/loaded")?.arguments == [.string(c), .int(2)])
        for _ in 0..<4 { rig.tick() }
        #expect(sound(rig.osc.replaced?.loaded) === original)
        #expect(rig.engine.registeredSoundCount == 2)
        // The file edited: the next load reads it again.
        try WAVFileWriter.write(path: rig.dir.appendingPathComponent("click.wav").path, channels: [[Float](repeating: 0.125, count: 2400)],
                                sampleRate: 48000)
        rig.send("/sampler/load", [.string(a)])
        #expect(rig.await("/sampler/loaded")?.arguments == [.string(a), .int(1)])
        let edited = try #require(sound(rig.osc.replaced?.loaded))
        #expect(edited !== original && edited.frameCount == 2400)
    }
}
