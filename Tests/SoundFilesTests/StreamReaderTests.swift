import Foundation
@testable import SamplerCore
import SoundFiles
import Testing

/// A mono float file whose frame i holds (i + 1) / 100000: every frame is identifiable.
private func rampFile(_ directory: TemporaryDirectory, _ name: String = "ramp.wav", frames: Int, rate: Int = 48000) throws -> String {
    let path = directory.file(name)
    try WAVFileWriter.write(path: path, channels: [ramp(frames)], sampleRate: rate)
    return path
}

private func ramp(_ frames: Int) -> [Float] { (0..<frames).map { Float($0 + 1) / 100_000 } }

/// An engine playing one ring on player 0 (hard left, unity gain), with the ring filled
/// synchronously before every block, as an offline render does.
private final class StreamHarness {
    let engine = Engine(configuration: .init(maxPlayers: 2))
    let reader: StreamReader
    var rendered: Frame = 0
    var events: [Event] = []

    init(path: String, capacity: Int, rate: Double = 48000, options: StreamReaderOptions = .init()) throws {
        let file = try StreamFile(path: path)
        let ring = StreamRing(capacity: capacity, channelCount: file.channelCount, sampleRate: rate)
        reader = try StreamReader(file: file, ring: ring, options: options)
    }

    func start(at frame: Frame = 0) throws {
        let id = try engine.register(stream: reader.ring)
        engine.send(.start(player: 0, sound: id, at: frame, pan: PanGains(pan: -1)))
    }

    /// Renders `frames` frames in blocks of `block`, filling first unless `starve`.
    func render(_ frames: Int, block: Int = 256, starve: Bool = false) -> [Float] {
        var out: [Float] = []
        let l = UnsafeMutablePointer<Float>.allocate(capacity: block)
        let r = UnsafeMutablePointer<Float>.allocate(capacity: block)
        defer { l.deallocate(); r.deallocate() }
        var done = 0
        while done < frames {
            if !starve { while reader.fill(maxFrames: 4096) > 0 {} }
            let n = min(block, frames - done)
            engine.render(frameCount: n, periodStart: rendered, left: l, right: r)
            engine.drainEvents { events.append($0) }
            out.append(contentsOf: UnsafeBufferPointer(start: l, count: n))
            rendered += Frame(n)
            done += n
        }
        return out
    }

    func eventList() -> [String] { events.map { "\($0.kind)@\($0.frame)" } }

    /// The device skips `frames` frames: the next block's stamp is that much later.
    func skip(_ frames: Int) { rendered += Frame(frames) }
}

@Suite struct StreamReaderTests {
    @Test func aCueStreamsTheFileFromItsPositionToItsEnd() throws {
        let directory = try TemporaryDirectory()
        let h = try StreamHarness(path: rampFile(directory, frames: 10_000), capacity: 2048)
        let ticket = h.reader.cue(at: 3000, loops: 0)
        h.reader.fill(maxFrames: 4096)
        #expect(h.reader.isPrimed(ticket))
        #expect(h.reader.bufferedFrames == 2048)
        try h.start()
        let out = h.render(8000)
        #expect(Array(out[0..<7000]).elementsEqual(ramp(10_000)[3000...]))
        #expect(out[7000...].allSatisfy { $0 == 0 })
        #expect(h.eventList() == ["started@0", "finished@7000"])
        #expect(h.reader.ring.underrunFrameCount == 0)
    }

    @Test(arguments: [256, 4096])
    func loopsWrapInPlaybackOrderWithEventsOnTheirFrames(capacity: Int) throws {
        let directory = try TemporaryDirectory()
        let h = try StreamHarness(path: rampFile(directory, frames: 1000), capacity: capacity)
        h.reader.cue(at: 900, loops: 2)
        try h.start(at: 10)
        let out = h.render(2200)
        let file = ramp(1000)
        let expected = [Float](repeating: 0, count: 10) + Array(file[900...]) + file + file
        #expect(out[0..<2110].elementsEqual(expected))
        #expect(out[2110...].allSatisfy { $0 == 0 })
        #expect(h.eventList() == ["started@10", "looped@110", "looped@1110", "finished@2110"])
    }

    /// A lost stretch far longer than the ring (issue 34): the wraps and the end inside it are
    /// reported on their frames, and once the disk has caught up the stream plays what the
    /// timeline says; the frames between are silence, counted as underrun.
    @Test(arguments: [48000, 44100])
    func aLostStretchLongerThanTheRingKeepsTheStreamsEventsOnTheirFrames(fileRate: Int) throws {
        let directory = try TemporaryDirectory()
        let h = try StreamHarness(path: rampFile(directory, frames: 10_000, rate: fileRate), capacity: 2048)
        let timeline = StreamTimeline(sourceFrameCount: 10_000, ratio: 48000 / Double(fileRate), startPosition: 0)
        let (w1, w2, w3, w4) = (timeline.wrapFrame(1), timeline.wrapFrame(2), timeline.wrapFrame(3), timeline.wrapFrame(4))
        h.reader.cue(at: 0, loops: 3)
        try h.start()
        _ = h.render(1024)
        // Lost: from 1024 to past the second wrap.
        h.skip(Int(w2) + 3000 - 1024)
        _ = h.render(512)
        let out = h.render(2048)
        #expect(h.eventList() == ["started@0", "looped@\(w1)", "looped@\(w2)"])
        if fileRate == 48000 {
            // From the block after the catch-up on, the file's frames where the timeline has them.
            let first = Int(w2) + 3000 + 512
            #expect(out.elementsEqual(ramp(10_000)[(first - Int(w2))..<(first - Int(w2) + 2048)]))
        }
        #expect(h.reader.ring.underrunFrameCount > 0)
        // Lost again: past the end.
        h.skip(Int(w4) + 500 - Int(h.rendered))
        _ = h.render(256)
        #expect(h.eventList() == ["started@0", "looped@\(w1)", "looped@\(w2)", "looped@\(w3)", "finished@\(w4)"])
    }

    @Test func loopsChangedWhilePlayingApplyToTheEndsNotYetBuffered() throws {
        let directory = try TemporaryDirectory()
        let h = try StreamHarness(path: rampFile(directory, frames: 2000), capacity: 256)
        h.reader.cue(at: 0, loops: 0)
        try h.start()
        _ = h.render(512)
        h.reader.setLoops(1)
        #expect(h.reader.remainingLoops == 1)
        _ = h.render(4500)
        #expect(h.eventList() == ["started@0", "looped@2000", "finished@4000"])
    }

    @Test func aResampledStreamHasTheResampledLengthAndTheOneShotResamplersSamples() throws {
        let directory = try TemporaryDirectory()
        let source = (0..<10_000).map { Float(0.5 * sin(2 * Double.pi * 440 * Double($0) / 44100)) }
        let path = directory.file("sine44.wav")
        try WAVFileWriter.write(path: path, channels: [source], sampleRate: 44100)
        var options = StreamReaderOptions()
        options.converter = .bestQuality  // libsamplerate's best sinc
        let h = try StreamHarness(path: path, capacity: 1024, options: options)
        #expect(h.reader.frameCount == 10_884)  // round(10000 × 48000 / 44100)
        h.reader.cue(at: 0, loops: 0)
        try h.start()
        let out = h.render(11_000)
        #expect(h.eventList() == ["started@0", "finished@10884"])
        let oneShot = try Resampler.resample([source], from: 44100, to: 48000)[0]
        #expect(oneShot.count == 10_884)
        // The stream converts with libsamplerate, whole sounds with libsoxr: away from the file's
        // ends they agree within 1e-5 (measured 3e-7); where the tone stops abruptly, their
        // filters ring differently (measured 0.0022).
        let difference = zip(out[0..<10_884], oneShot).map { abs($0 - $1) }
        #expect(difference[200..<10_684].max()! < 1e-5)
        #expect(difference.max()! < 0.01)
    }

    @Test func aResampledLoopWrapsWhereTheFileEndFallsWithoutDrift() throws {
        let directory = try TemporaryDirectory()
        let path = try rampFile(directory, frames: 10_000, rate: 44100)
        let h = try StreamHarness(path: path, capacity: 1024)
        h.reader.cue(at: 0, loops: 2)
        try h.start()
        _ = h.render(33_000)
        // 10000 × 48000/44100 = 10884.35: the wraps fall on the nearest frames of 1×, 2×, 3× that.
        #expect(h.eventList() == ["started@0", "looped@10884", "looped@21769", "finished@32653"])
    }

    @Test func aResampledCueStartsNearItsPosition() throws {
        let directory = try TemporaryDirectory()
        let source = (0..<20_000).map { Float(0.5 * sin(2 * Double.pi * 100 * Double($0) / 44100)) }
        let path = directory.file("low44.wav")
        try WAVFileWriter.write(path: path, channels: [source], sampleRate: 44100)
        let oneShot = try Resampler.resample([source], from: 44100, to: 48000)[0]
        let h = try StreamHarness(path: path, capacity: 4096)
        h.reader.cue(at: 10_000, loops: 0)
        try h.start()
        let out = h.render(2000)
        // Within half a source frame of the exact position (a 100 Hz sine moves < 0.004 in that).
        let difference = zip(out[64..<2000], oneShot[10_064..<12_000]).map { abs($0 - $1) }.max() ?? 1
        #expect(difference < 0.004)
    }

    @Test func anUnderrunIsSkippedSoTheStreamStaysInTime() throws {
        let directory = try TemporaryDirectory()
        let h = try StreamHarness(path: rampFile(directory, frames: 10_000), capacity: 512)
        h.reader.cue(at: 0, loops: 0)
        h.reader.fill(maxFrames: 4096)
        try h.start()
        let starved = h.render(1024, starve: true)
        #expect(h.reader.ring.underrunFrameCount == 512)
        #expect(starved[511] != 0 && starved[512] == 0)
        let after = h.render(2048)
        // Frame k of the stream plays file frame k, underrun or not.
        #expect(after.elementsEqual(ramp(10_000)[1024..<3072]))
    }

    @Test func aFileReplacedOnDiskIsNotReread() throws {
        let directory = try TemporaryDirectory()
        let path = try rampFile(directory, frames: 5000)
        let h = try StreamHarness(path: path, capacity: 8192)
        // Replace the file (a new file renamed over it, as editors save) before anything is read.
        let other = directory.file("other.wav")
        try WAVFileWriter.write(path: other, channels: [[Float](repeating: 0.5, count: 9000)], sampleRate: 48000)
        #expect(rename(other, path) == 0)
        h.reader.cue(at: 0, loops: 0)
        try h.start()
        let out = h.render(6000)
        #expect(out[0..<5000].elementsEqual(ramp(5000)))
        #expect(h.eventList() == ["started@0", "finished@5000"])
    }

    @Test func stereoFilesKeepTheirChannelsApart() throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("stereo.wav")
        try WAVFileWriter.write(path: path, channels: [ramp(3000), ramp(3000).map { -$0 }], sampleRate: 48000)
        let file = try StreamFile(path: path)
        let ring = StreamRing(capacity: 4096, channelCount: 2, sampleRate: 48000)
        let reader = try StreamReader(file: file, ring: ring)
        let engine = Engine(configuration: .init(maxPlayers: 1))
        reader.cue(at: 0, loops: 0)
        reader.fill(maxFrames: 4096)
        engine.send(.start(player: 0, sound: try engine.register(stream: ring), at: 0))
        let l = UnsafeMutablePointer<Float>.allocate(capacity: 3000), r = UnsafeMutablePointer<Float>.allocate(capacity: 3000)
        defer { l.deallocate(); r.deallocate() }
        engine.render(frameCount: 3000, periodStart: 0, left: l, right: r)
        #expect(UnsafeBufferPointer(start: l, count: 3000).elementsEqual(ramp(3000)))
        #expect(UnsafeBufferPointer(start: r, count: 3000).elementsEqual(ramp(3000).map { -$0 }))
    }

    @Test func theDiskThreadKeepsRingsWithinAChunkOfFullAsTheyDrain() throws {
        let directory = try TemporaryDirectory()
        let path = try rampFile(directory, frames: 48_000)
        let streamer = DiskStreamer(wakeInterval: 0.002)
        streamer.start()
        defer { streamer.stop() }
        let engine = Engine(configuration: .init(maxPlayers: 3))
        var readers: [StreamReader] = []
        for p in 0..<3 {
            let ring = StreamRing(capacity: 2048, channelCount: 1, sampleRate: 48000)
            let reader = try StreamReader(file: StreamFile(path: path), ring: ring)
            streamer.add(reader)
            #expect(reader.waitUntilPrimed(reader.cue(at: Int64(p * 1000), loops: 0), timeout: 2))
            engine.send(.start(player: p, sound: try engine.register(stream: ring), at: 0, pan: PanGains(pan: -1)))
            readers.append(reader)
        }
        let l = UnsafeMutablePointer<Float>.allocate(capacity: 512), r = UnsafeMutablePointer<Float>.allocate(capacity: 512)
        defer { l.deallocate(); r.deallocate() }
        for block in 0..<40 {
            engine.render(frameCount: 512, periodStart: Frame(block * 512), left: l, right: r)
            // Sum of the three ramps at stream frame k: (k+1 + k+1001 + k+2001) / 100000.
            let k = block * 512
            #expect(abs(l[0] - Float(3 * k + 3003) / 100_000) < 1e-6)
            #expect(waitUntilRefilled(readers))
        }
        #expect(readers.allSatisfy { $0.ring.underrunFrameCount == 0 })
    }

    @Test func theTimelineMapsStreamFramesToFilePositions() {
        let t = StreamTimeline(sourceFrameCount: 1000, ratio: 1, startPosition: 900)
        #expect(t.wrapFrame(1) == 100 && t.wrapFrame(2) == 1100)
        #expect(t.wraps(before: 99) == 0 && t.wraps(before: 100) == 1 && t.wraps(before: 1100) == 2)
        #expect(t.filePosition(at: 0) == 900 && t.filePosition(at: 150) == 50 && t.filePosition(at: 1100) == 0)
        #expect(t.sourceLocation(at: 150) == (1, 50))
        let r = StreamTimeline(sourceFrameCount: 44100, ratio: 48000.0 / 44100, startPosition: 0)
        #expect(r.frameCount == 48000 && r.wrapFrame(3) == 144_000 && r.wraps(before: 143_999) == 2)
    }

    /// The ownership rule for stream rings (issue 34): the ring a switch retires is cued again
    /// only once the render thread has confirmed that no voice reads it, not on the frame the
    /// control side predicted. Here a voice the control side did not count on (player 0, still
    /// playing ring A long after the switch to ring B) keeps ring A from being refilled.
    @Test func aRetiredRingIsCuedAgainOnlyOnceNoVoiceReadsIt() throws {
        let directory = try TemporaryDirectory()
        let path = try rampFile(directory, frames: 48_000)
        let engine = Engine(configuration: .init(maxPlayers: 2))
        let file = try StreamFile(path: path)
        let rings = try (0..<2).map { _ in
            let ring = StreamRing(capacity: 8192, channelCount: 1, sampleRate: 48000)
            return (ring: ring, id: try engine.register(stream: ring))
        }
        let stream = try PlayerStream(file: file, rings: rings, options: .init(), streamer: DiskStreamer(), engine: engine)
        defer { stream.close() }
        for reader in stream.readers { _ = reader.cue(at: 0, loops: 0) }
        let l = UnsafeMutablePointer<Float>.allocate(capacity: 256), r = UnsafeMutablePointer<Float>.allocate(capacity: 256)
        defer { l.deallocate(); r.deallocate() }
        var rendered: Frame = 0
        func render(_ periods: Int) {
            for _ in 0..<periods {
                for reader in stream.readers { while reader.fill(maxFrames: 4096) > 0 {} }
                engine.render(frameCount: 256, periodStart: rendered, left: l, right: r)
                rendered += 256
            }
        }
        engine.send(.start(player: 0, sound: stream.activeSoundID, at: 0))
        stream.started(at: 0)
        engine.send(.start(player: 1, sound: stream.idleSoundID, at: 1000))
        stream.switchToIdle(at: 1000, recueLoops: 0)
        render(12)
        // The switch's frame is long rendered, but ring A is still read.
        #expect(rendered > 1000)
        #expect(!stream.maintain(renderedFrame: engine.renderedFrame))
        render(2)
        #expect(!stream.maintain(renderedFrame: engine.renderedFrame))
        engine.send(.stop(player: 0))
        render(1)
        // The request went out before the stop was sent: it is answered for the state then.
        _ = stream.maintain(renderedFrame: engine.renderedFrame)
        render(2)
        _ = stream.maintain(renderedFrame: engine.renderedFrame)
        render(2)
        #expect(stream.maintain(renderedFrame: engine.renderedFrame))
        #expect(!stream.isSwitching)
    }


    /// The render thread's wrap and end arithmetic is the disk thread's (`StreamTimeline`), for
    /// plain and resampled rates, and never traps or searches long: a loop count of a trillion
    /// ends "never", a file shorter than a frame at the playback rate wraps every frame.
    @Test func theRenderThreadsTimelineIsTheWritersAndStaysBounded() {
        var random = UInt64(0x5EED)
        func next(_ range: ClosedRange<Int64>) -> Int64 {
            random = random &* 6364136223846793005 &+ 1442695040888963407
            return range.lowerBound + Int64((random >> 11) % UInt64(range.count))
        }
        let ratios: [Double] = [1, 48000 / 44100, 44100 / 48000, 96000 / 44100, 0.5, 2, 1.0 / 3, 255.9, 1.0 / 255]
        var mismatches = 0
        for i in 0..<50_000 {
            let ratio = ratios[i % ratios.count]
            let frames = next(1...5_000_000)
            let t = StreamTimeline(sourceFrameCount: frames, ratio: ratio, startPosition: next(0...Int64(Double(frames) * ratio)))
            let k = next(1...1000), j = next(0...(t.frameCount * 1000))
            if t.wrapFrame(k) != StreamRingState.wrapFrame(k, sourceFrames: frames, sourceStart: t.sourceStart, ratio: ratio) { mismatches += 1 }
            if t.wraps(before: j) != StreamRingState.wraps(before: j, sourceFrames: frames, sourceStart: t.sourceStart, ratio: ratio) { mismatches += 1 }
        }
        #expect(mismatches == 0)
        #expect(StreamRingState.wrapFrame(1_000_000_000_001, sourceFrames: 28_800_000, sourceStart: 0, ratio: 1) == .max)
        #expect(StreamRingState.wrapFrame(1_000_000_000_001, sourceFrames: 28_800_000, sourceStart: 0, ratio: 48000 / 44100) == .max)
        #expect(StreamRingState.wraps(before: 28_800_000, sourceFrames: 1, sourceStart: 0, ratio: 44100 / 48000) == 28_800_000)
    }
}

/// Waits until every ring is within one refill step of full (the disk thread refills a primed
/// ring once at least min(chunk, capacity / 2) frames are free).
private func waitUntilRefilled(_ readers: [StreamReader]) -> Bool {
    let deadline = Date().addingTimeInterval(2)
    while readers.contains(where: { $0.ring.writableFrames >= min($0.options.chunkFrames, $0.ring.capacity / 2) }) {
        if Date() > deadline { return false }
        usleep(200)
    }
    return true
}
