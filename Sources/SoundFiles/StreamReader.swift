import CSampleRate
import Foundation
import SamplerCore
import Synchronization

/// libsamplerate's converters, for streams whose file rate differs from the playback rate.
public enum StreamConverter: Sendable {
    case bestQuality, mediumQuality, fastest

    var libsamplerateType: Int32 {
        switch self {
        case .bestQuality: Int32(SRC_SINC_BEST_QUALITY)
        case .mediumQuality: Int32(SRC_SINC_MEDIUM_QUALITY)
        case .fastest: Int32(SRC_SINC_FASTEST)
        }
    }
}

/// How a `StreamReader` reads.
public struct StreamReaderOptions: Sendable {
    /// The converter used when the file's rate differs from the ring's. Medium by default: best
    /// quality costs about four times as much, which over a dozen or so resampled streams adds up
    /// to a whole core (docs/streaming.md has the measurement).
    public var converter: StreamConverter = .mediumQuality
    /// Most frames read (and written to the ring) per step: one step of one stream is the unit
    /// the disk thread interleaves streams by.
    public var chunkFrames = 4096
    /// Test hook: called on the disk thread before every read from the file (e.g. a sleep, to
    /// provoke underruns). nil in normal use.
    public var readDelay: (@Sendable () -> Void)?

    public init() {}
}

/// Fills one `StreamRing` from a `StreamFile`, in playback order: from a cue position to the
/// file's end, then (while loops remain) from its start again with the wrap marked on its
/// frame, and the end marked after the last pass. Resamples on the way when the file's rate is
/// not the ring's, with libsamplerate in streaming mode (one converter state that runs across
/// reads and wraps; end of input only at the real end).
///
/// Threads: the control side calls `cue`, `park`, `setLoops` and the queries (any thread; a lock
/// guards the requests). The writer side, `fill`, runs on one thread at a time: the
/// `DiskStreamer`'s thread, or whoever pumps it synchronously. The ring's reader is the render
/// thread, which never waits for any of this.
///
/// `@unchecked Sendable` by contract: the request fields are only touched under `lock`; the writer-side
/// fields and buffers only by `fill`, one thread at a time (`DiskStreamer` serializes with `fillLock`);
/// `primedTicket` is atomic; the streamer it is attached to is under `lock` too.
package final class StreamReader: @unchecked Sendable {
    package let file: StreamFile
    package let ring: StreamRing
    package let options: StreamReaderOptions
    /// Ring rate ÷ file rate.
    package let ratio: Double
    /// One pass through the file at the ring's rate, in frames.
    package let frameCount: Int64

    // MARK: Control side (under `lock`)

    private enum Request { case cue(position: Int64, passes: Int64?, ticket: Int), park }
    private let lock = NSLock()
    private var request: Request?
    private var requestedPasses: Int64??
    private var lastTicket = 0
    /// What the control side last asked for, for its position queries.
    private var cuedTimeline: StreamTimeline
    private var cuedPasses: Int64?
    /// The ticket of the last cue whose first ring-full has been written (or that ended or
    /// waits on a wrap): after it, starting the ring plays the cue position on its exact frame.
    private let primedTicket = Atomic<Int>(0)
    /// Set by `DiskStreamer.add`, to wake its thread on a request. Under `lock`.
    private weak var attachedStreamer: DiskStreamer?
    /// The streamer serving this reader. Any thread.
    var streamer: DiskStreamer? {
        get { lock.withLock { attachedStreamer } }
        set { lock.withLock { attachedStreamer = newValue } }
    }

    // MARK: Writer side (the disk thread only)

    private enum Phase { case idle, filling, ended }
    private var phase = Phase.idle
    private var timeline: StreamTimeline
    /// Passes in all, from the cue (the first, partial, one included); nil = forever.
    private var passes: Int64?
    /// Wraps marked so far in the ring, and the ring index of the last one.
    private var outputWraps: Int64 = 0
    private var lastWrapIndex: Int64 = -1
    /// The file side: pass being read, next file frame, and whether the last input was read.
    private var inputPass: Int64 = 0
    private var sourcePosition: Int64 = 0
    private var inputEnded = false
    private var currentTicket = 0

    private let converter: OpaquePointer?
    private let input: UnsafeMutablePointer<Float>
    private var inputStart = 0, inputCount = 0
    private let output: UnsafeMutablePointer<Float>
    private let left: UnsafeMutablePointer<Float>
    private let right: UnsafeMutablePointer<Float>

    /// A reader of `file` into `ring` (whose rate is the playback rate). Idle until `cue`.
    /// Control thread only.
    package init(file: StreamFile, ring: StreamRing, options: StreamReaderOptions = .init()) throws(SoundFileError) {
        precondition(ring.channelCount == file.channelCount, "the ring must have the file's channel count")
        precondition(options.chunkFrames > 0)
        self.file = file
        self.ring = ring
        self.options = options
        ratio = ring.sampleRate / file.sampleRate
        guard src_is_valid_ratio(ratio) != 0 else {
            throw SoundFileError(file: file.path, reason: .resampleFailed(
                "ratio \(ratio) (\(file.sampleRate) Hz → \(ring.sampleRate) Hz) is outside libsamplerate's 1/256…256"))
        }
        frameCount = StreamTimeline.frameCount(sourceFrames: file.frameCount, ratio: ratio)
        timeline = StreamTimeline(sourceFrameCount: file.frameCount, ratio: ratio, startPosition: 0)
        cuedTimeline = timeline
        if ratio != 1 {
            var error: Int32 = 0
            guard let state = src_new(options.converter.libsamplerateType, Int32(file.channelCount), &error) else {
                throw SoundFileError(file: file.path, reason: .resampleFailed(String(cString: src_strerror(error))))
            }
            converter = state
        } else {
            converter = nil
        }
        let chunk = options.chunkFrames
        input = .allocate(capacity: chunk * file.channelCount)
        output = .allocate(capacity: chunk * file.channelCount)
        left = .allocate(capacity: chunk)
        right = .allocate(capacity: chunk)
        left.initialize(repeating: 0, count: chunk)
        right.initialize(repeating: 0, count: chunk)
    }

    deinit {
        if let converter { src_delete(converter) }
        input.deallocate()
        output.deallocate()
        left.deallocate()
        right.deallocate()
    }

    // MARK: Control side

    /// Asks the writer to empty the ring and fill it from output frame `position` of the file,
    /// with `loops` more passes after this one (-1 = forever). The ring must not be playing (no
    /// voice on it) until `isPrimed(ticket)`. Returns the ticket of this cue. Any thread.
    @discardableResult
    package func cue(at position: Int64, loops: Int) -> Int {
        let (ticket, streamer): (Int, DiskStreamer?) = lock.withLock {
            lastTicket += 1
            let passes: Int64? = loops < 0 ? nil : Int64(loops) + 1
            cuedTimeline = StreamTimeline(sourceFrameCount: file.frameCount, ratio: ratio, startPosition: position)
            cuedPasses = passes
            request = .cue(position: cuedTimeline.startPosition, passes: passes, ticket: lastTicket)
            requestedPasses = nil
            return (lastTicket, attachedStreamer)
        }
        streamer?.wake()
        return ticket
    }

    /// Asks the writer to stop filling (the ring is no longer played). Any thread.
    package func park() {
        lock.withLock { request = .park }
    }

    /// Sets the repeats still to come after the pass now playing (-1 = forever). A file end the
    /// writer has already buffered (within one ring of the read position) is not undone: the
    /// change then applies from the pass after it. Any thread.
    package func setLoops(_ loops: Int) {
        let streamer: DiskStreamer? = lock.withLock {
            let playing = cuedTimeline.wraps(before: ring.readIndex)
            let passes: Int64? = loops < 0 ? nil : playing + 1 + Int64(loops)
            cuedPasses = passes
            requestedPasses = .some(passes)
            return attachedStreamer
        }
        streamer?.wake()
    }

    /// Whether the cue `ticket` (or a later one) has its first ring-full written.
    package func isPrimed(_ ticket: Int) -> Bool { primedTicket.load(ordering: .acquiring) >= ticket }

    /// Waits (polling every half millisecond) until `isPrimed(ticket)` or `timeout` seconds pass.
    package func waitUntilPrimed(_ ticket: Int, timeout: Double = 5, idle: () -> Void = { usleep(500) }) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while !isPrimed(ticket) {
            if Date() > deadline { return false }
            idle()
        }
        return true
    }

    /// The output frame of the file the ring's read index is at (where playback is), by the
    /// last cue. Any thread.
    package var playbackPosition: Int64 {
        lock.withLock { cuedTimeline.filePosition(at: ring.readIndex) }
    }

    /// Repeats still to come after the pass playing now (-1 = forever). Any thread.
    package var remainingLoops: Int {
        lock.withLock {
            guard let passes = cuedPasses else { return -1 }
            return Int(max(0, passes - 1 - cuedTimeline.wraps(before: ring.readIndex)))
        }
    }

    /// Frames in the ring not yet played.
    package var bufferedFrames: Int { Int(max(0, ring.writeIndex - ring.readIndex)) }

    // MARK: Writer side

    /// Applies the control side's requests, then writes up to `maxFrames` frames to the ring
    /// (less when it is full, or waits on a wrap, or the stream ended). After an underrun it
    /// first skips what the render thread passed, so the stream stays in time. Returns the
    /// frames written. One writer thread at a time.
    @discardableResult
    package func fill(maxFrames: Int) -> Int {
        applyRequests()
        guard phase == .filling else { return 0 }
        if ring.skipToRead() > 0 { resynchronize() }
        // Once primed, refill in whole chunks: a converter call and a read per few frames would
        // cost far more than the samples themselves.
        if primedTicket.load(ordering: .relaxed) >= currentTicket
            && ring.writableFrames < min(options.chunkFrames, ring.capacity / 2) {
            return 0
        }
        var written = 0
        var waitsOnWrap = false
        while written < maxFrames && phase == .filling {
            let j = ring.writeIndex
            let boundary = timeline.wrapFrame(outputWraps + 1)
            if j >= boundary {
                if let passes, outputWraps + 1 >= passes {
                    ring.markEnd()
                    phase = .ended
                    break
                }
                // The ring holds one wrap mark: the next waits until the last has been played.
                if lastWrapIndex >= 0 && ring.readIndex <= lastWrapIndex {
                    waitsOnWrap = true
                    break
                }
                ring.markWrap()
                lastWrapIndex = j
                outputWraps += 1
                continue
            }
            let room = min(ring.writableFrames, maxFrames - written, Int(min(boundary - j, Int64(Int.max))))
            guard room > 0 else { break }
            let n = converter == nil ? copy(upTo: room) : resample(upTo: room)
            guard n > 0 else { break }
            written += n
        }
        if phase == .ended || ring.writableFrames == 0 || waitsOnWrap {
            primedTicket.store(currentTicket, ordering: .releasing)
        }
        return written
    }

    private func applyRequests() {
        let (request, passesChange): (Request?, Int64??) = lock.withLock {
            defer { self.request = nil; requestedPasses = nil }
            return (self.request, requestedPasses)
        }
        switch request {
        case .cue(let position, let passes, let ticket):
            ring.reset()
            timeline = StreamTimeline(sourceFrameCount: file.frameCount, ratio: ratio, startPosition: position)
            self.passes = passes
            ring.setTimeline(sourceFrames: timeline.sourceFrameCount, sourceStart: timeline.sourceStart, ratio: ratio, passes: passes)
            outputWraps = 0
            lastWrapIndex = -1
            inputPass = 0
            sourcePosition = timeline.sourceStart
            inputEnded = false
            inputStart = 0
            inputCount = 0
            if let converter { src_reset(converter) }
            currentTicket = ticket
            phase = .filling
        case .park:
            phase = .idle
        case nil:
            break
        }
        if case .some(let newPasses) = passesChange, phase == .filling {
            // Passes already written stay written.
            let clamped = newPasses.map { max($0, outputWraps + 1) }
            let resumesInput = inputEnded && (clamped == nil || clamped! > inputPass + 1)
            passes = clamped
            ring.setTimelinePasses(clamped)
            if resumesInput { resynchronize() }
        }
    }

    /// Points the file side at the ring's write index (after the render thread skipped ahead, or
    /// when input must resume after its end was announced to the converter).
    private func resynchronize() {
        let j = ring.writeIndex
        if let passes, timeline.wrapFrame(passes) <= j {
            ring.markEnd()
            phase = .ended
            return
        }
        outputWraps = timeline.wraps(before: j)
        let location = timeline.sourceLocation(at: j)
        inputPass = location.pass
        sourcePosition = location.frame
        inputEnded = false
        inputStart = 0
        inputCount = 0
        if let converter { src_reset(converter) }
    }

    /// Reads `count` frames from the current file position into `input`; what the file does not
    /// provide (shorter than its header said, read errors) becomes silence, so the stream stays
    /// in time.
    private func readFile(_ count: Int) {
        options.readDelay?()
        let channels = file.channelCount
        let read = file.read(from: sourcePosition, count: count, into: input)
        if read < count {
            (input + read * channels).update(repeating: 0, count: (count - read) * channels)
        }
    }

    /// Same rate: file frames go to the ring as they are.
    private func copy(upTo room: Int) -> Int {
        if sourcePosition >= file.frameCount {
            sourcePosition = 0
            inputPass += 1
        }
        let n = min(room, options.chunkFrames, Int(file.frameCount - sourcePosition))
        readFile(n)
        writeInterleaved(input, count: n)
        sourcePosition += Int64(n)
        return n
    }

    /// Reads the next input chunk, wrapping to the file's start while passes remain.
    private func refillInput() {
        func morePasses() -> Bool { passes.map { inputPass + 1 < $0 } ?? true }
        if sourcePosition >= file.frameCount {
            guard morePasses() else { inputEnded = true; return }
            sourcePosition = 0
            inputPass += 1
        }
        let n = min(options.chunkFrames, Int(file.frameCount - sourcePosition))
        readFile(n)
        inputStart = 0
        inputCount = n
        sourcePosition += Int64(n)
        if sourcePosition >= file.frameCount && !morePasses() { inputEnded = true }
    }

    /// Different rates: up to `room` output frames from the converter, which keeps its state
    /// across calls and wraps. Past the converter's last output (the real end), silence.
    private func resample(upTo room: Int) -> Int {
        guard let converter else { return 0 }
        let channels = file.channelCount
        var produced = 0
        while produced < room {
            if inputCount == 0 && !inputEnded { refillInput() }
            var data = SRC_DATA()
            data.data_in = UnsafePointer(input + inputStart * channels)
            data.input_frames = inputCount
            data.data_out = output
            data.output_frames = min(room - produced, options.chunkFrames)
            data.end_of_input = inputEnded ? 1 : 0
            data.src_ratio = ratio
            if src_process(converter, &data) != 0 {
                // Cannot happen with valid buffers and ratio; keep time with silence if it does.
                writeSilence(room - produced)
                return room
            }
            inputStart += data.input_frames_used
            inputCount -= data.input_frames_used
            let generated = data.output_frames_gen
            if generated > 0 {
                writeInterleaved(output, count: generated)
                produced += generated
            } else if inputEnded && inputCount == 0 {
                // The converter has given everything; the pass length is fixed by the timeline.
                writeSilence(room - produced)
                produced = room
            } else if data.input_frames_used == 0 && inputCount > 0 {
                break
            }
        }
        return produced
    }

    private func writeInterleaved(_ samples: UnsafeMutablePointer<Float>, count: Int) {
        if file.channelCount == 1 {
            ring.write(left: samples, right: nil, count: count)
        } else {
            for f in 0..<count {
                left[f] = samples[2 * f]
                right[f] = samples[2 * f + 1]
            }
            ring.write(left: left, right: right, count: count)
        }
    }

    private func writeSilence(_ count: Int) {
        var done = 0
        output.update(repeating: 0, count: min(count, options.chunkFrames) * file.channelCount)
        while done < count {
            let n = min(count - done, options.chunkFrames)
            writeInterleaved(output, count: n)
            done += n
        }
    }
}
