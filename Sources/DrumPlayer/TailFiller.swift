import Foundation
import Glibc
import Locking
import ProgramHost
import SamplerCore
import SoundFiles
import Synchronization

/// Reads the tails of a patch's streamed sounds into the engine's tail buffers
/// (`Engine.attachTailBuffers`) as voices ask for them (`Engine.nextTailRequest`), as far as
/// each voice plays: a file played as it is is decoded from its start as the load did (the same
/// bits) by a `TailReader` of the request's own, which writes the frames from the head's end on
/// into the buffer, up to where the render thread says the voice may read by the end of the next
/// period (`Engine.tailNeed`), and stops when no voice plays the buffer any more; any other
/// sound (trimmed, reversed, …) is decoded whole once and its tail copied as far. A buffer is a
/// ring: nothing is written a buffer's length or more past where its voice is. Live, a thread of its
/// own does it, polling every millisecond and reading `readAhead` frames ahead of each voice;
/// offline (no thread started), the feeding thread does it before each block, exactly as far as
/// each voice may read in it, so that an offline render never misses a frame.
///
/// One filler serves every kit an engine plays, one after another (`/sampler/load`): each kit
/// adds its sources (`add`), under source ids never used before, and removes them when it goes
/// (`remove`); a request for a source removed is finished unread (its voice was stopped at the
/// swap).
///
/// `@unchecked Sendable` by contract: `sources` is `Locked`; the requests and `readings` have
/// one consumer at a time (the thread once `startThread` has run, else the feeding thread, which
/// calls `serviceAll`), and `last` and `keptLoops` are that consumer's (the helpers it waits for
/// each touch only their own `Reading`, which holds its source, and its buffer; a loop kept whole
/// that readings share is only read); `stopped`, `live`, `busy`, `lagging`, `read`, `passes`
/// and `madeWhole` are atomics.
final class TailFiller: @unchecked Sendable {
    private let engine: Engine
    /// Where a streamed sound comes from.
    enum Source: Sendable {
        /// A file played as it is, at `sampleRate`, with `channels` channels.
        case file(path: String, root: String?, sampleRate: Double, channels: Int)
        /// Any other sound, made whole.
        case sound(@Sendable () throws -> Sound)
        /// A file played as it is but for `loop`, which repeats forever: its first pass read
        /// as `.file` reads a tail (the whole file's frames up to the loop's end), each repeat
        /// copied from the pass before it while that is still in the ring (a loop of at most
        /// half of it), else from the loop as the first pass made it, kept for the voice (and
        /// from the head where the loop begins in it).
        case loopedFile(path: String, root: String?, sampleRate: Double, channels: Int, loop: FileLoop)
    }

    /// Where a looped file's loop lies (frames at the kit's rate: its first, and the one after
    /// its last, which ends the sound played), the whole file's frames, and the sound's head.
    struct FileLoop: Sendable {
        let start: Int
        let end: Int
        let fileFrames: Int
        let head: Sound
    }

    /// Each kit's sources from its first id on, with each source's whole length as loaded (a
    /// file that changed since is not read).
    private struct Sources {
        var kits: [Int32: (sources: [Source], frames: [Int])] = [:]
        var nextID: Int32 = 0
    }
    private let sources = Locked(Sources())
    private let stopped = Atomic<Bool>(false)
    private let live = Atomic<Bool>(false)
    /// Set while the thread reads tails.
    private let busy = Atomic<Bool>(false)
    /// Tails read short of where their voices may read, after the thread's last pass.
    private let lagging = Atomic<Int>(0)
    /// The tails' frames read so far, all buffers together.
    private let read = Atomic<Int>(0)
    var framesRead: Int { read.load(ordering: .relaxed) }
    /// The thread's passes so far: one begun after a render has seen what that render asked.
    private let passes = Atomic<Int>(0)
    var passCount: Int { passes.load(ordering: .acquiring) }
    /// The sounds made whole for tails so far (`.sound` sources).
    private let madeWhole = Atomic<Int>(0)
    var soundsMadeWhole: Int { madeWhole.load(ordering: .relaxed) }
    /// The last sound decoded whole, by source: notes repeated on one key decode it once.
    private var last: (source: Int32, sound: Sound)?
    /// A tail being read, by buffer. `@unchecked Sendable` by contract: in a pass each reading is
    /// handed to one helper at most, and touched by the consumer only before and after the pass.
    private final class Reading: @unchecked Sendable {
        let request: TailRequest
        let length: Int
        let source: Source
        let frames: Int
        var reader: TailReader?
        /// A `.sound` source's whole sound, copied from.
        var copied: Sound?
        /// A `.loopedFile` source's loop (its frames, one array a channel) as its first pass
        /// made it, copied from: for a loop longer than half the ring (a shorter one's repeats
        /// are copied from the pass before, still in the ring). Set when it is whole (then
        /// shared: never written).
        var loopFrames: [[Float]]?
        var loopKept = false
        /// Set when its first pass wrote past frames its voice had not played (the voice ended
        /// there): what it kept is not the whole loop, and is never shared.
        var loopBroken = false
        /// Where this pass may not write (a buffer's length past where its voice is).
        var limit = 0
        /// The frames read before this pass (the consumer's), and where this pass is to read to.
        var written = 0
        var target = 0

        init(request: TailRequest, length: Int, source: Source, frames: Int) {
            self.request = request
            self.length = length
            self.source = source
            self.frames = frames
        }
    }
    private var readings: [Int32: Reading] = [:]
    /// Loops kept whole (`Reading.loopFrames`), by source, while a voice plays them: once the
    /// first voice of a sample has made its copy, every voice of the sample shares it (voices
    /// that began before then make their own until it is made). The consumer's.
    private var keptLoops: [Int32: [[Float]]] = [:]
    /// How far ahead of each voice a live filler reads (frames).
    static let readAhead = 24_576

    init(engine: Engine) {
        self.engine = engine
    }

    /// `count` source ids no kit had before: the first (the others follow it). Nil when the
    /// ids are used up. Control thread.
    func reserve(_ count: Int) -> Int32? {
        sources.withLock { s -> Int32? in
            guard Int(s.nextID) + count <= Int(Int32.max) else { return nil }
            defer { s.nextID += Int32(count) }
            return s.nextID
        }
    }

    /// Adds a kit's sources under the ids reserved from `first` on, each with its whole length
    /// as loaded. Control thread.
    func add(first: Int32, _ kitSources: [Source], frames: [Int]) {
        precondition(kitSources.count == frames.count)
        sources.withLock { $0.kits[first] = (kitSources, frames) }
        if live.load(ordering: .relaxed) { spawn() }
    }

    /// The kits that use it: the last one gone stops the thread. Control thread.
    func addUser() { users.add(1, ordering: .relaxed) }
    func removeUser() { if users.subtract(1, ordering: .relaxed).newValue == 0 { stop() } }
    private let users = Atomic<Int>(0)

    /// Removes the kit whose sources begin at `first`. Control thread.
    func remove(first: Int32) { sources.withLock { _ = $0.kits.removeValue(forKey: first) } }

    /// Request `source`'s source and whole length; nil when its kit was removed.
    private func source(_ id: Int32) -> (Source, Int)? {
        sources.withLock { s -> (Source, Int)? in
            // Kits are few: the one whose ids hold `id`.
            for (first, kit) in s.kits where id >= first && Int(id) - Int(first) < kit.sources.count {
                return (kit.sources[Int(id - first)], kit.frames[Int(id - first)])
            }
            return nil
        }
    }

    /// Whether a thread reads the tails (live), or the feeding thread does (offline).
    var isLive: Bool { live.load(ordering: .relaxed) }

    /// Reads tails on a thread of its own as they are asked for (live): the thread starts now,
    /// or once a kit adds sources (a player ready for loads whose own kit streams nothing has
    /// no thread until then). Control thread.
    func startThread() {
        guard !live.exchange(true, ordering: .relaxed) else { return }
        if sources.withLock({ !$0.kits.isEmpty }) { spawn() }
    }

    private let spawned = Atomic<Bool>(false)

    private func spawn() {
        guard !spawned.exchange(true, ordering: .relaxed) else { return }
        let thread = Thread { [self] in
            // Named for `top -H` and /proc (Foundation's `name` is not the system's on Linux).
            let comm = open("/proc/thread-self/comm", O_WRONLY)
            if comm >= 0 {
                _ = "sampler tails".withCString { write(comm, $0, strlen($0)) }
                close(comm)
            }
            while !stopped.load(ordering: .relaxed) {
                busy.store(true, ordering: .relaxed)
                let any = serviceAll()
                busy.store(false, ordering: .releasing)
                passes.add(1, ordering: .releasing)
                if !any { usleep(1_000) }
            }
        }
        thread.name = "sampler tails"
        thread.qualityOfService = .userInitiated
        thread.start()
    }

    /// Stops the thread at its next request (it holds the engine until then).
    func stop() { stopped.store(true, ordering: .relaxed) }

    /// Whether every tail asked for so far has been read as far as its voice may read (a
    /// snapshot; live).
    var isIdle: Bool {
        !busy.load(ordering: .acquiring) && engine.pendingTailRequestCount == 0 && lagging.load(ordering: .relaxed) == 0
    }

    /// Takes the new requests and reads every tail being read as far as its voice may read (live:
    /// `readAhead` further); finishes those read whole or no longer played. Tails of files
    /// played as they are are read side by side, one per processor. Whether there was anything
    /// to do. The consumer's thread (it waits for its helpers).
    @discardableResult
    func serviceAll() -> Bool {
        var any = false
        while let request = engine.nextTailRequest() {
            any = true
            guard let (source, frames) = source(request.source), fits(request, frames: frames) else {
                engine.finishTailRequest(request)
                continue
            }
            let reading = Reading(request: request, length: engine.tailLength(of: request), source: source, frames: frames)
            if case .sound = source {
                guard let sound = wholeSound(request, source: source, frames: frames) else {
                    engine.finishTailRequest(request)
                    continue
                }
                reading.copied = sound
            }
            // A loop another voice's first pass kept: shared, not kept again.
            if let kept = keptLoops[request.source] {
                reading.loopFrames = kept
                reading.loopKept = true
            }
            readings[request.buffer] = reading
        }
        guard !readings.isEmpty else {
            lagging.store(0, ordering: .relaxed)
            return any
        }
        let ahead = isLive ? Self.readAhead : 0
        var work: [Reading] = []
        for (buffer, reading) in readings {
            let need = engine.tailNeed(of: reading.request)
            if need.abandoned {
                engine.finishTailRequest(reading.request)
                readings[buffer] = nil
                any = true
                continue
            }
            reading.target = min(reading.length, need.frames + ahead)
            reading.limit = need.floor + engine.tailBufferMemory(Int(buffer)).capacity
            if reading.written < min(reading.target, reading.limit) { work.append(reading) }
        }
        let threads = min(work.count, Self.processors)
        if threads > 1 {
            let next = Atomic<Int>(0), all = work
            DispatchQueue.concurrentPerform(iterations: threads) { _ in
                while case let k = next.add(1, ordering: .relaxed).oldValue, k < all.count { fill(all[k]) }
            }
        } else {
            for reading in work { fill(reading) }
        }
        for reading in work {
            // A loop kept whole by this pass: shared with the voices that play it next.
            if !reading.loopKept, !reading.loopBroken, let kept = reading.loopFrames, case .loopedFile(_, _, _, _, let loop) = reading.source,
               reading.written >= loop.end - Int(reading.request.from) {
                let source = reading.request.source
                keptLoops[source] = kept
                // Every voice of the sample shares it from now on, one still in its first pass
                // too (its own copy dropped: a shared one is never written).
                for other in readings.values where other.request.source == source && !other.loopKept {
                    other.loopFrames = kept
                    other.loopKept = true
                }
            }
            any = true
            if reading.written >= reading.length || (reading.copied == nil && reading.reader?.failed != false) {
                // Read whole, or never to be read further (the voice ends where it was read).
                engine.finishTailRequest(reading.request)
                readings[reading.request.buffer] = nil
            }
        }
        // Kept loops only while a voice plays them.
        if !keptLoops.isEmpty {
            let playing = Set(readings.values.map(\.request.source))
            keptLoops = keptLoops.filter { playing.contains($0.key) }
        }
        // Short of where their voices may read now (the render thread may have moved on
        // during the pass).
        var short = 0
        for reading in readings.values {
            let need = engine.tailNeed(of: reading.request)
            let ring = need.floor + engine.tailBufferMemory(Int(reading.request.buffer)).capacity
            if !need.abandoned, reading.written < min(reading.length, need.frames, ring) { short += 1 }
        }
        lagging.store(short, ordering: .relaxed)
        return any
    }

    private static let processors = max(1, ProcessInfo.processInfo.activeProcessorCount)

    /// Whether `request` asks for a tail of a sound of `frames` frames (a buffer, a ring, takes
    /// any length).
    private func fits(_ request: TailRequest, frames: Int) -> Bool {
        let from = Int(request.from)
        return from >= 0 && frames - from > 0
    }

    /// `reading`'s tail read up to its target at least, and published. Any thread (touches only
    /// the reading and its buffer).
    private func fill(_ reading: Reading) {
        let request = reading.request
        if let sound = reading.copied {
            copy(reading, from: sound)
            return
        }
        let path: String, root: String?, sampleRate: Double, channels: Int, loop: FileLoop?, frames: Int
        switch reading.source {
        case .file(let p, let r, let rate, let c): (path, root, sampleRate, channels, loop, frames) = (p, r, rate, c, nil, reading.frames)
        case .loopedFile(let p, let r, let rate, let c, let l): (path, root, sampleRate, channels, loop, frames) = (p, r, rate, c, l, l.fileFrames)
        case .sound: return
        }
        let memory = engine.tailBufferMemory(Int(request.buffer))
        if reading.reader == nil {
            let stereo = channels == 2 && memory.right != memory.left
            reading.reader = (try? TailReader(loader: SoundFileLoader(targetSampleRate: sampleRate), path: path, root: root,
                                              frames: frames, from: Int(request.from), channelCount: channels,
                                              left: memory.left, right: stereo ? memory.right : nil, ring: memory.capacity)) ?? nil
        }
        guard let reader = reading.reader else { return }
        let from = Int(request.from)
        let stereo = channels == 2 && memory.right != memory.left
        if let loop, reading.loopFrames == nil, 2 * (loop.end - loop.start) > memory.capacity {
            // Kept as the first pass makes it; where the loop begins in the head, from there.
            reading.loopFrames = [[Float]](repeating: [Float](repeating: 0, count: loop.end - loop.start), count: stereo ? 2 : 1)
            if loop.start < from {
                for c in 0..<reading.loopFrames!.count {
                    let head = c == 0 ? loop.head.left : loop.head.right
                    reading.loopFrames![c].withUnsafeMutableBufferPointer { $0.baseAddress!.update(from: head + loop.start, count: from - loop.start) }
                }
            }
        }
        // The first pass, up to a loop's end.
        let firstPass = loop.map { $0.end - from } ?? Int.max
        if reading.written < firstPass {
            let before = reading.written
            reader.read(upTo: min(reading.target, firstPass), limit: min(reading.limit, firstPass))
            if reader.failed { return }
            read.add(reader.written - reading.written, ordering: .relaxed)
            reading.written = reader.written
            if let loop, reading.loopFrames != nil, !reading.loopKept { keepLoop(reading, loop, from: before, memory: memory) }
        }
        if let loop, reading.written >= firstPass { repeatLoop(reading, loop, memory: memory, stereo: stereo) }
        engine.publishTailFrames(request, frames: reading.written, peak: reader.peak)
    }

    /// The frames of `loop` among those `reading`'s first pass wrote since tail frame `before`,
    /// kept (`Reading.loopFrames`).
    private func keepLoop(_ reading: Reading, _ loop: FileLoop, from before: Int,
                          memory: (left: UnsafeMutablePointer<Float>, right: UnsafeMutablePointer<Float>, capacity: Int)) {
        let from = Int(reading.request.from)
        // Sound frames first ..< last, within the loop.
        // (A pass that wrote more than a ring's length went past frames its voice had not played:
        // the voice ended there, counted; only the ring's last length is there to keep.)
        let first = max(from + before, loop.start, from + reading.written - memory.capacity), last = min(from + reading.written, loop.end)
        if first > max(from + before, loop.start) { reading.loopBroken = true }
        guard first < last else { return }
        for c in 0..<reading.loopFrames!.count {
            let ring = c == 0 ? memory.left : memory.right
            // The ring's second mapping: `capacity` frames from any slot are one run (what was
            // written since `before` is at most a ring's length).
            reading.loopFrames![c].withUnsafeMutableBufferPointer {
                ($0.baseAddress! + (first - loop.start)).update(from: ring + (first - from) % memory.capacity, count: last - first)
            }
        }
    }

    /// The repeats of `loop` after its first pass in `reading`'s ring, up to its target (not at
    /// or past its limit): tail frame j is the one a loop's length before it, still in the ring
    /// (the loop is at most half of it, so no run copied overlaps the one it is copied to), or
    /// in the head for a loop that begins there. Any thread (touches only the reading and its buffer).
    private func repeatLoop(_ reading: Reading, _ loop: FileLoop, memory: (left: UnsafeMutablePointer<Float>, right: UnsafeMutablePointer<Float>, capacity: Int),
                            stereo both: Bool) {
        let from = Int(reading.request.from), length = loop.end - loop.start, capacity = memory.capacity
        let end = min(reading.target, reading.limit, reading.length)
        var j = reading.written
        if let kept = reading.loopFrames {
            while j < end {
                // The loop's frame for tail frame j.
                let at = (from + j - loop.end) % length
                let n = min(end - j, length - at, capacity)
                let slot = j % capacity
                kept[0].withUnsafeBufferPointer { (memory.left + slot).update(from: $0.baseAddress! + at, count: n) }
                if both { kept[1].withUnsafeBufferPointer { (memory.right + slot).update(from: $0.baseAddress! + at, count: n) } }
                j += n
            }
        }
        while j < end {
            // The sound frame this one repeats.
            let source = from + j - length
            var n = min(end - j, length, capacity)
            let slot = j % capacity
            if source < from {
                n = min(n, from - source)
                (memory.left + slot).update(from: loop.head.left + source, count: n)
                if both { (memory.right + slot).update(from: loop.head.right + source, count: n) }
            } else {
                let at = (source - from) % capacity
                (memory.left + slot).update(from: memory.left + at, count: n)
                if both { (memory.right + slot).update(from: memory.right + at, count: n) }
            }
            j += n
        }
        if j > reading.written {
            read.add(j - reading.written, ordering: .relaxed)
            reading.written = j
        }
    }

    /// A `.sound` source's whole sound, made once and kept as `last` (notes repeated on one key
    /// make it once); nil when it cannot be made or is not as long as loaded. The consumer's
    /// thread.
    private func wholeSound(_ request: TailRequest, source: Source, frames: Int) -> Sound? {
        guard case .sound(let make) = source else { return nil }
        let sound: Sound
        do {
            if let last, last.source == request.source {
                sound = last.sound
            } else {
                madeWhole.add(1, ordering: .relaxed)
                sound = try make()
                last = (request.source, sound)
            }
        } catch {
            return nil
        }
        return sound.frameCount == frames ? sound : nil
    }

    /// `reading`'s tail copied from `sound` up to its target (not at or past its limit), slot
    /// by slot of the ring, and published: past the sound's end (a tail that repeats its loop),
    /// its loop over and over. Any thread (touches only the reading and its buffer).
    private func copy(_ reading: Reading, from sound: Sound) {
        let memory = engine.tailBufferMemory(Int(reading.request.buffer))
        let from = Int(reading.request.from)
        let end = min(reading.target, reading.limit, reading.length)
        let frames = sound.frameCount, loopStart = sound.loopStart
        var j = reading.written
        while j < end {
            // The sound's frame for the tail's frame j: past its end, in the loop's repeats.
            var at = from + j
            if at >= frames { at = loopStart + (at - frames) % (frames - loopStart) }
            // The ring's second mapping: `capacity` frames from any slot are one run.
            let n = min(end - j, memory.capacity, frames - at)
            let slot = j % memory.capacity
            (memory.left + slot).update(from: sound.left + at, count: n)
            if sound.channelCount == 2, memory.right != memory.left { (memory.right + slot).update(from: sound.right + at, count: n) }
            j += n
        }
        if j > reading.written {
            read.add(j - reading.written, ordering: .relaxed)
            reading.written = j
            engine.publishTailFrames(reading.request, frames: j, peak: sound.peak)
        }
    }
}
