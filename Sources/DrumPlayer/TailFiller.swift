import Foundation
import ProgramHost
import SamplerCore
import SoundFiles
import Synchronization

/// Reads the tails of a patch's streamed sounds into the engine's tail buffers
/// (`Engine.attachTailBuffers`) as voices ask for them (`Engine.nextTailRequest`): each source
/// decodes its sound as the load did (the same bits), and the frames from the head's end on
/// are written into the buffer: a file played as it is straight from its decoder, chunk by
/// chunk; any other sound (tuned, trimmed, …) decoded whole and copied. Live, a thread of its own does it, polling every millisecond;
/// offline (no thread started), the feeding thread does it before each block, so that every
/// tail asked for in a block is read before the next one renders and an offline render never
/// misses one.
///
/// `@unchecked Sendable` by contract: `sources` and `frames` never change; the requests have one
/// consumer at a time (the thread once `startThread` has run, else the feeding thread, which
/// calls `serviceAll`), and `last` is that consumer's (the helpers it waits for fill only
/// `.file` sources, which do not touch it, each into its own buffer); `stopped` and `isLive` are
/// atomics.
final class TailFiller: @unchecked Sendable {
    private let engine: Engine
    /// Where a streamed sound comes from.
    enum Source: Sendable {
        /// A file played as it is, at `sampleRate`, with `channels` channels.
        case file(path: String, root: String?, sampleRate: Double, channels: Int)
        /// Any other sound, made whole.
        case sound(@Sendable () throws -> Sound)
    }

    private let sources: [Source]
    /// Each source's whole length as loaded: a file that changed since is not read.
    private let frames: [Int]
    private let stopped = Atomic<Bool>(false)
    private let live = Atomic<Bool>(false)
    /// Set while the thread reads a tail.
    private let busy = Atomic<Bool>(false)
    /// The last sound decoded whole, by source: notes repeated on one key decode it once.
    private var last: (source: Int32, sound: Sound)?
    /// The source of the last `.file` tail read.
    private var lastFile: Int32?

    init(engine: Engine, frames: [Int], sources: [Source]) {
        self.engine = engine
        self.frames = frames
        self.sources = sources
    }

    /// Whether a thread reads the tails (live), or the feeding thread does (offline).
    var isLive: Bool { live.load(ordering: .relaxed) }

    /// Starts the thread that reads tails as they are asked for (live). Control thread, once.
    func startThread() {
        guard !live.exchange(true, ordering: .relaxed) else { return }
        let thread = Thread { [self] in
            while !stopped.load(ordering: .relaxed) {
                busy.store(true, ordering: .relaxed)
                let any = serviceAll()
                busy.store(false, ordering: .releasing)
                if !any { usleep(1_000) }
            }
        }
        thread.name = "sampler tails"
        thread.qualityOfService = .userInitiated
        thread.start()
    }

    /// Stops the thread at its next request (it holds the engine until then).
    func stop() { stopped.store(true, ordering: .relaxed) }

    /// Whether every tail asked for so far has been read (a snapshot; live).
    var isIdle: Bool { !busy.load(ordering: .acquiring) && engine.pendingTailRequestCount == 0 }

    /// Reads every tail asked for so far; whether there was one. Tails of files played as they
    /// are are decoded straight into their buffers, side by side, one per processor. A file
    /// asked for again (in the same batch, or right after its last tail: a roll on one key) is
    /// decoded whole once and kept as the last sound made, as every other source is, and its
    /// tails copied from it one after another. The consumer's thread (it waits for its helpers).
    @discardableResult
    func serviceAll() -> Bool {
        var requests: [TailRequest] = []
        while let request = engine.nextTailRequest() { requests.append(request) }
        guard !requests.isEmpty else { return false }
        var counts: [Int32: Int] = [:]
        for request in requests { counts[request.source, default: 0] += 1 }
        var straight: [TailRequest] = [], copied: [TailRequest] = []
        for request in requests {
            if case .file = sources[Int(request.source)], counts[request.source] == 1, request.source != lastFile,
               request.source != last?.source {
                straight.append(request)
            } else {
                copied.append(request)
            }
        }
        let threads = min(straight.count, Self.processors)
        if threads > 1 {
            let next = Atomic<Int>(0), all = straight
            DispatchQueue.concurrentPerform(iterations: threads) { _ in
                while case let k = next.add(1, ordering: .relaxed).oldValue, k < all.count { fillStraight(all[k]) }
            }
        } else {
            for request in straight { fillStraight(request) }
        }
        for request in copied { fillCopied(request) }
        if let file = requests.last(where: { if case .file = sources[Int($0.source)] { true } else { false } }) { lastFile = file.source }
        return true
    }

    private static let processors = max(1, ProcessInfo.processInfo.activeProcessorCount)

    /// Whether `request` fits its buffer; finishes it unfilled when not.
    private func fits(_ request: TailRequest) -> Bool {
        let from = Int(request.from), frames = frames[Int(request.source)]
        guard from >= 0, frames - from > 0, frames - from <= engine.tailBufferMemory(Int(request.buffer)).capacity else {
            engine.finishTailRequest(request, filled: false)
            return false
        }
        return true
    }

    /// A `.file` source's tail decoded straight into its buffer. Any thread (touches only the
    /// request's buffer).
    private func fillStraight(_ request: TailRequest) {
        guard fits(request), case .file(let path, let root, let sampleRate, let channels) = sources[Int(request.source)] else { return }
        let memory = engine.tailBufferMemory(Int(request.buffer))
        let stereo = channels == 2 && memory.right != memory.left
        let peak = try? SoundFileLoader(targetSampleRate: sampleRate).readTail(
            path: path, root: root, frames: frames[Int(request.source)], from: Int(request.from), channelCount: channels,
            left: memory.left, right: stereo ? memory.right : nil)
        if let peak {
            engine.finishTailRequest(request, filled: true, peak: peak)
        } else {
            engine.finishTailRequest(request, filled: false)
        }
    }

    /// A tail copied from its source's whole sound, made once and kept as `last`. The consumer's
    /// thread.
    private func fillCopied(_ request: TailRequest) {
        guard fits(request) else { return }
        let sound: Sound
        do {
            if let last, last.source == request.source {
                sound = last.sound
            } else {
                switch sources[Int(request.source)] {
                case .file(let path, let root, let sampleRate, _):
                    sound = try SoundFileLoader(targetSampleRate: sampleRate).load(path: path, root: root)
                case .sound(let make):
                    sound = try make()
                }
                last = (request.source, sound)
            }
        } catch {
            engine.finishTailRequest(request, filled: false)
            return
        }
        let memory = engine.tailBufferMemory(Int(request.buffer))
        let from = Int(request.from), frames = frames[Int(request.source)]
        var channelsAsLoaded = true
        if case .file(_, _, _, let channels) = sources[Int(request.source)] { channelsAsLoaded = sound.channelCount == channels }
        guard sound.frameCount == frames, channelsAsLoaded else {
            engine.finishTailRequest(request, filled: false)
            return
        }
        let count = frames - from
        memory.left.update(from: sound.left + from, count: count)
        if sound.channelCount == 2, memory.right != memory.left { memory.right.update(from: sound.right + from, count: count) }
        engine.finishTailRequest(request, filled: true, peak: sound.peak)
    }
}
