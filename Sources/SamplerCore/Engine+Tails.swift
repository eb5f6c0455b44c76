import CPrefetch
import Glibc
import Synchronization

// Sounds streamed per voice: a sound's head is in memory, its tail is read from disk for each
// voice that plays it. A voice takes a buffer when it starts (from a pool sized by the
// polyphony) and asks a filler (another thread, or the offline renderer between blocks) to read
// the tail into it, as far as the voice plays: every period the render thread publishes how far
// each buffer's voice may read by the end of the next period (`need`), where it is (`floor`:
// what lies before it is never read again), and that no voice plays it any more (`abandoned`);
// the filler reads ahead of the first, never more than a buffer's length past the second, and
// stops at the third. A buffer is a ring: tail frame j is at j mod capacity, and its memory is
// mapped twice, one copy after the other, so that any `capacity` frames from any slot are one
// run of addresses for the kernels and for the filler. A tail of any length plays through a
// buffer of a few seconds. At the head's end, and at the end of what was read, the voice goes on
// in the buffer if its next frames were read by then, and ends there otherwise (a tail read
// late: silence, counted, never a shift). A start that finds no free buffer is refused
// (counted).

/// Where the tail of a sound registered with `Engine.register(_:tail:)` comes from.
public struct TailSource: Sendable {
    /// The filler's number for it (`TailRequest.source`).
    public var id: Int32
    /// The whole sound's frames, and its largest |sample| (`Sound.peak` of the whole).
    public var frames: Int
    public var peak: Float
    /// Set for a sound that loops forever from this frame to its end (`frames`): the filler
    /// writes the loop over and over after the first pass, and a voice plays on through the
    /// repeats without wrapping (it never ends by itself: a release or a stop ends it). Its
    /// positions count the repeats, and it reports no wraps.
    public var loopStart: Int?

    public init(id: Int32, frames: Int, peak: Float, loopStart: Int? = nil) {
        self.id = id
        self.frames = frames
        self.peak = peak
        self.loopStart = loopStart
    }

    /// The length a tail that loops forever is given: longer than any voice plays.
    static let endlessFrames: Int64 = 1 << 60
}

/// What the render thread asks of the filler: buffer `buffer` is to hold source `source`'s
/// frames from `from` on (frame `from` at the buffer's start), for the voice that took it
/// (`generation`).
public struct TailRequest: Sendable, BitwiseCopyable {
    public var buffer: Int32
    public var source: Int32
    public var from: Int64
    public var generation: UInt32
}

/// The tail buffers, as `attachTailBuffers` made them: the fields never change after it. What
/// they point to: the samples are the filler's to write between a request and its
/// `finishTailRequest` (frame j of the tail at slot j mod `capacity`, only while j < `floor` +
/// `capacity`), and the render thread's to read from `floor` up to what `filled` says;
/// `filled`, `peak` and `done` are written by the filler (`filled` reset by the render thread
/// when it takes the buffer, before its request is pushed); `need`, `floor`, `abandoned`,
/// `generation`, `owner`, `head`, `length` and `slot`'s sound slots by the render thread (`head`
/// and `length` before the request is pushed, read by the filler after it pops it).
struct TailBuffers {
    var count = 0
    var capacity = 0
    var left: UnsafeMutablePointer<UnsafeMutablePointer<Float>>?
    var right: UnsafeMutablePointer<UnsafeMutablePointer<Float>>?
    /// The frames of the current request's tail written so far (from the buffer's start), and
    /// the generation of the last request the filler is finished with (whole, given up or
    /// abandoned).
    var filled: UnsafeMutablePointer<Atomic<Int64>>?
    var done: UnsafeMutablePointer<Atomic<UInt32>>?
    /// The largest |sample| of the sound up to the frames written (Float bits), stored before
    /// `filled`.
    var peak: UnsafeMutablePointer<Atomic<UInt32>>?
    /// How far (buffer frames) the voice may read by the end of the next period; the generation
    /// no voice plays any more.
    var need: UnsafeMutablePointer<Atomic<Int64>>?
    var abandoned: UnsafeMutablePointer<Atomic<UInt32>>?
    /// The first frame (from the buffer's start) its voice may still read: where it was at the
    /// end of the last period. Only grows for a request (a seek or rewind never goes before it).
    var floor: UnsafeMutablePointer<Atomic<Int64>>?
    /// The sound frame at the buffer's start (the head's end), and the tail's frames.
    var head: UnsafeMutablePointer<Int64>?
    var length: UnsafeMutablePointer<Int64>?
    /// The longest period rendered so far (render thread).
    var longestPeriod: UnsafeMutablePointer<Int>?
    /// The generation of its last request, the player whose voice took it, and the sound slot
    /// that plays it (its pointers set by the render thread for each voice).
    var generation: UnsafeMutablePointer<UInt32>?
    var owner: UnsafeMutablePointer<Int32>?
    var slot: UnsafeMutablePointer<Int32>?

    /// `frames` rounded up to whole pages of floats (a ring's two mappings begin on a page).
    static func ringFrames(_ frames: Int) -> Int {
        let page = max(1, sysconf(Int32(_SC_PAGESIZE)) / MemoryLayout<Float>.size)
        let (rounded, overflow) = max(1, frames).addingReportingOverflow(page - 1)
        return overflow ? Int.max : rounded / page * page
    }

    /// A ring of `capacity` frames (a multiple of a page), its memory mapped twice, one copy
    /// right after the other: frame `capacity + k` is frame k. Its pages are taken as the filler
    /// writes them. Nil when the system refuses it.
    static func mapBuffer(capacity: Int) -> UnsafeMutablePointer<Float>? {
        let (bytes, overflow) = capacity.multipliedReportingOverflow(by: 2 * MemoryLayout<Float>.size)
        guard !overflow, capacity > 0 else { return nil }
        let half = bytes / 2
        let fd = sampler_memfd("sampler tail")
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        guard ftruncate(fd, off_t(half)) == 0,
              let span = mmap(nil, bytes, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0), span != MAP_FAILED else { return nil }
        for copy in 0..<2 {
            let at = span + copy * half
            guard let p = mmap(at, half, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, fd, 0), p == at else {
                munmap(span, bytes)
                return nil
            }
        }
        return span.bindMemory(to: Float.self, capacity: 2 * capacity)
    }

    static func unmapBuffer(_ p: UnsafeMutablePointer<Float>, capacity: Int) {
        munmap(UnsafeMutableRawPointer(p), 2 * capacity * MemoryLayout<Float>.size)
    }

    func deallocate() {
        guard left != nil else { return }
        for b in 0..<count {
            if right![b] != left![b] { Self.unmapBuffer(right![b], capacity: capacity) }
            Self.unmapBuffer(left![b], capacity: capacity)
        }
        left?.deallocate()
        right?.deallocate()
        filled?.deinitialize(count: count)
        filled?.deallocate()
        need?.deinitialize(count: count)
        need?.deallocate()
        floor?.deinitialize(count: count)
        floor?.deallocate()
        abandoned?.deinitialize(count: count)
        abandoned?.deallocate()
        head?.deallocate()
        length?.deallocate()
        longestPeriod?.deallocate()
        done?.deinitialize(count: count)
        done?.deallocate()
        peak?.deinitialize(count: count)
        peak?.deallocate()
        generation?.deallocate()
        owner?.deallocate()
        slot?.deallocate()
    }
}

extension Engine {
    /// Makes `count` ring buffers of `capacity` frames (per channel, rounded up to whole pages;
    /// two channels when `stereo`) for the tails of sounds registered with `register(_:tail:)`,
    /// each with a sound slot of its own. A tail of any length plays through one; the filler
    /// reads at most `capacity` frames ahead of where its voice is. Control thread, once, before
    /// the first render.
    public func attachTailBuffers(count: Int, capacity frames: Int, stereo: Bool) throws(EngineError) {
        precondition(tailBuffers.pointee.count == 0 && count > 0 && frames > 0, "tail buffers are attached once")
        precondition(periodCount == 0, "tail buffers are attached before the engine renders")
        let capacity = TailBuffers.ringFrames(frames)
        var t = TailBuffers()
        t.count = count
        t.capacity = capacity
        t.left = .allocate(capacity: count)
        t.right = .allocate(capacity: count)
        t.filled = .allocate(capacity: count)
        t.need = .allocate(capacity: count)
        t.floor = .allocate(capacity: count)
        t.abandoned = .allocate(capacity: count)
        t.head = .allocate(capacity: count)
        t.head!.initialize(repeating: 0, count: count)
        t.length = .allocate(capacity: count)
        t.length!.initialize(repeating: 0, count: count)
        t.longestPeriod = .allocate(capacity: 1)
        t.longestPeriod!.initialize(to: 0)
        t.done = .allocate(capacity: count)
        t.peak = .allocate(capacity: count)
        t.generation = .allocate(capacity: count)
        t.generation!.initialize(repeating: 0, count: count)
        t.owner = .allocate(capacity: count)
        t.owner!.initialize(repeating: -1, count: count)
        t.slot = .allocate(capacity: count)
        for b in 0..<count {
            // Not written here: a buffer's frames are read only once the filler has written them
            // (which makes their pages resident), so memory is taken as tails are read.
            guard let l = TailBuffers.mapBuffer(capacity: capacity) else {
                t.count = b
                t.deallocate()
                throw .outOfMemory(bytes: Int(min(0x1p62, Double(count) * Double(capacity) * (stereo ? 8 : 4))))
            }
            t.left![b] = l
            if stereo {
                guard let r = TailBuffers.mapBuffer(capacity: capacity) else {
                    TailBuffers.unmapBuffer(l, capacity: capacity)
                    t.count = b
                    t.deallocate()
                    throw .outOfMemory(bytes: Int(min(0x1p62, Double(count) * Double(capacity) * 8)))
                }
                t.right![b] = r
            } else {
                t.right![b] = l
            }
            (t.filled! + b).initialize(to: Atomic(0))
            (t.need! + b).initialize(to: Atomic(0))
            (t.floor! + b).initialize(to: Atomic(0))
            (t.abandoned! + b).initialize(to: Atomic(0))
            (t.done! + b).initialize(to: Atomic(0))
            (t.peak! + b).initialize(to: Atomic(Float.infinity.bitPattern))
        }
        // Each buffer's slot: registered for good (never withdrawn), its sound a placeholder;
        // the render thread points it at the buffer for each voice.
        do {
            for b in 0..<count {
                let placeholder = try Sound(channels: [[0, 0]], sampleRate: 48_000)
                t.slot![b] = try register(placeholder).rawValue
            }
        } catch let error as EngineError {
            t.deallocate()
            throw error
        } catch {
            t.deallocate()
            preconditionFailure("a two-frame placeholder sound: \(error)")
        }
        tailBuffers.pointee = t
    }

    /// Makes `head` playable as the start of a longer sound whose frames from `head.frameCount
    /// - 1` on are read per voice from `tail` (the head holds one frame more than it plays: the
    /// first of the tail, for interpolation). `tail.peak` may be infinity (not known before
    /// the tail is read: the filler gives it with the tail). Control thread only.
    public func register(_ head: Sound, tail: TailSource) throws(EngineError) -> SoundID {
        precondition(head.frameCount >= 2 && tail.frames >= head.frameCount, "a head of at least two frames, within its sound")
        precondition(tail.loopStart.map { $0 >= 0 && $0 < tail.frames } ?? true, "a loop within the sound")
        let index = try takeSlot()
        var slot = SoundSlot(left: head.left, right: head.right, frames: Int64(head.frameCount - 1),
                             isStereo: head.channelCount == 2, stream: nil, peak: head.peak,
                             loopStart: 0, continuation: -1)
        slot.tail = tail.id
        slot.tailFrames = tail.loopStart == nil ? Int64(tail.frames) : TailSource.endlessFrames
        slot.tailRepeats = tail.loopStart != nil
        slot.tailPeak = tail.peak
        sounds[index] = slot
        continuations[index] = -1
        registered[index] = head
        registrations[index] = 1
        return SoundID(rawValue: Int32(index))
    }

    /// The tail buffers attached (`attachTailBuffers`): how many, their frames per channel and
    /// whether they hold two channels; count 0 when none are. Control thread.
    public var tailBufferShape: (count: Int, capacity: Int, stereo: Bool) {
        let t = tailBuffers.pointee
        return (t.count, t.capacity, t.count > 0 && t.right![0] != t.left![0])
    }

    /// The next request for the filler, if any. One thread at a time (the filler's).
    public func nextTailRequest() -> TailRequest? { tailRequests.pop() }

    /// Requests not yet taken by the filler. Any thread (a snapshot).
    public var pendingTailRequestCount: Int { tailRequests.count }

    /// Buffer `buffer`'s memory (`right == left` for mono) and its frames per channel: tail frame
    /// j goes to slot j mod `capacity`, and `capacity` frames from any slot are one run of
    /// addresses (the ring is mapped twice). Any thread.
    public func tailBufferMemory(_ buffer: Int) -> (left: UnsafeMutablePointer<Float>, right: UnsafeMutablePointer<Float>, capacity: Int) {
        let t = tailBuffers.pointee
        return (t.left![buffer], t.right![buffer], t.capacity)
    }

    /// The longest block, up to `preferred` frames, in which no voice can play past its sound's
    /// head: the head's frames, less the interpolation neighbour, at the fastest any voice may
    /// play (four times its rate, or its instrument's `fastestRate`). Offline, the filler reads
    /// a tail before each block, and a voice that starts inside a block plays that block from
    /// its head alone: blocks this short keep such voices exact, for heads at least two frames
    /// longer than the fastest rate (one frame, then; a voice that would still outrun its head
    /// ends there, counted). `preferred` when no sound streams its tail. Control thread, with
    /// the instruments set and before the engine renders, or on the thread that renders it.
    public func longestBlockWithinHeads(atMost preferred: Int) -> Int {
        var shortest = Int64.max
        for i in registered.indices where registered[i] != nil && sounds[i].tail >= 0 {
            shortest = min(shortest, sounds[i].frames)
        }
        if shortest == .max { return preferred }
        var rate: Float = 4
        let tables = instrumentTables.pointee
        for i in 0..<tables.instrumentCount { rate = max(rate, tables.instruments[i].fastestRate) }
        let frames = Double(shortest - 2) / Double(rate)
        return max(1, min(preferred, Int(frames.rounded(.down))))
    }

    /// The tail's frames of `request` (from the buffer's start). The filler's thread.
    public func tailLength(of request: TailRequest) -> Int { Int(tailBuffers.pointee.length![Int(request.buffer)]) }

    /// The filler has written the first `frames` frames of `request`'s tail into its buffer, of a
    /// sound whose largest |sample| up to there is `peak`. The pages of the frames new since the
    /// last call are mapped at both of their addresses in the ring (the filler wrote them through
    /// one, the voice may read them through the other), so that the render thread never takes a
    /// page fault on them. The filler's thread.
    public func publishTailFrames(_ request: TailRequest, frames: Int, peak: Float) {
        let t = tailBuffers.pointee
        let b = Int(request.buffer)
        let before = Int(t.filled![b].load(ordering: .relaxed))
        if frames > before {
            let capacity = t.capacity
            // Whole passes beyond one ring map every page once.
            var at = max(before, frames - capacity)
            while at < frames {
                let slot = at % capacity
                let n = min(frames - at, capacity - slot)
                let bytes = UInt(n * MemoryLayout<Float>.size)
                sampler_touch_pages(t.left![b] + slot, bytes)
                sampler_touch_pages(t.left![b] + slot + capacity, bytes)
                if t.right![b] != t.left![b] {
                    sampler_touch_pages(t.right![b] + slot, bytes)
                    sampler_touch_pages(t.right![b] + slot + capacity, bytes)
                }
                at += n
            }
        }
        t.peak![Int(request.buffer)].store(peak.bitPattern, ordering: .relaxed)
        t.filled![Int(request.buffer)].store(Int64(frames), ordering: .releasing)
    }

    /// How far (frames from the buffer's start) `request`'s voice may read by the end of the
    /// next period; the first frame it may still read (`floor`: the filler writes only frames
    /// before `floor + capacity`, whose slots hold frames it has played); and whether no voice
    /// plays it any more (then the filler finishes it). The filler's thread.
    public func tailNeed(of request: TailRequest) -> (frames: Int, floor: Int, abandoned: Bool) {
        let t = tailBuffers.pointee
        let b = Int(request.buffer)
        let abandoned = t.abandoned![b].load(ordering: .acquiring) == request.generation
        let floor = Int(t.floor![b].load(ordering: .acquiring))
        return (Int(t.need![b].load(ordering: .relaxed)), floor, abandoned)
    }

    /// The filler is done with `request`: the buffer holds its whole tail (`filled`: its frames
    /// published with `peak`), or as much as `publishTailFrames` said. The filler's thread.
    public func finishTailRequest(_ request: TailRequest, filled: Bool = false, peak: Float = .infinity) {
        let t = tailBuffers.pointee
        if filled { publishTailFrames(request, frames: tailLength(of: request), peak: peak) }
        t.done![Int(request.buffer)].store(request.generation, ordering: .releasing)
    }

    /// Voices that reached their head's end, or the end of what was read of their tail, before
    /// their next frames were read (they ended there), and
    /// starts refused for want of a free buffer. Any thread.
    public var tailUnderrunCount: Int { tailUnderrunCounter.load(ordering: .relaxed) }
    public var refusedTailCount: Int { refusedTailCounter.load(ordering: .relaxed) }

    /// A free buffer for a voice of player `p` starting `slot`'s sound (a head), its slot pointed
    /// at the buffer and its tail asked for; −1 when none is free (or the request queue is full). Free: the filler is done with its last request and
    /// neither the voice nor the declick tail that took it still plays it.
    @_noLocks @_noAllocation
    func takeTailBuffer(player p: Int, slot: SoundSlot) -> Int32 {
        let t = tailBuffers.pointee
        let b = freeTailBuffer(for: slot)
        if b < 0 { return -1 }
        let head = slot.frames
        tailCursor.pointee = b + 1
        let generation = t.generation![b] &+ 1
        t.generation![b] = generation
        t.owner![b] = Int32(p)
        t.head![b] = slot.frames
        t.length![b] = slot.tailFrames - slot.frames
        t.filled![b].store(0, ordering: .relaxed)
        // Published at the end of the period, from where the voice is.
        t.need![b].store(0, ordering: .relaxed)
        t.floor![b].store(0, ordering: .relaxed)
        // The buffer's frame 0 is the sound's frame `head`.
        let left = t.left![b] - Int(head)
        let right = slot.isStereo ? t.right![b] - Int(head) : left
        var whole = slot
        whole.left = left
        whole.right = right
        // Nothing of the tail yet: `extendTail` sets what was read.
        whole.frames = head
        whole.peak = slot.tailPeak
        whole.tailBuffer = Int32(b)
        whole.loopStart = head
        whole.tailStart = head
        whole.continuation = -1
        whole.tail = -1
        whole.tailFrames = 0
        whole.tailPeak = 0
        sounds[Int(t.slot![b])] = whole
        _ = tailRequests.push(TailRequest(buffer: Int32(b), source: slot.tail, from: head, generation: generation))
        return Int32(b)
    }

    /// The buffer `takeTailBuffer` would take for `slot`'s sound now, or −1.
    @_noLocks @_noAllocation
    func freeTailBuffer(for slot: SoundSlot) -> Int {
        let t = tailBuffers.pointee
        if t.count == 0 { return -1 }
        if !tailRequests.hasRoom { return -1 }
        var b = tailCursor.pointee
        var tried = 0
        while tried < t.count {
            if b >= t.count { b = 0 }
            if tailBufferIsFree(b, t) { return b }
            b += 1
            tried += 1
        }
        return -1
    }

    @_noLocks @_noAllocation @inline(__always)
    private func tailBufferIsFree(_ b: Int, _ t: TailBuffers) -> Bool {
        if t.done![b].load(ordering: .acquiring) != t.generation![b] { return false }
        let o = Int(t.owner![b])
        if o < 0 { return true }
        if voiceTailBuffers[o] == Int32(b), voices[o].isActive { return false }
        if tailTailBuffers[o] == Int32(b), tails[o].isActive { return false }
        return true
    }

    /// Voice (or declick tail) `v`, at its head's end, goes on in its tail's buffer: true when
    /// the tail was read by now; false (counted) when not, and the voice ends.
    @_noLocks @_noAllocation
    func switchToTail(_ v: UnsafeMutablePointer<Voice>) -> Bool {
        // Nested rather than `&&` (see `Engine+VoiceWalk.swift`).
        var b = -1
        if v >= tails {
            if v < tails + configuration.maxPlayers { b = Int(tailTailBuffers[v - tails]) } else { b = Int(voiceTailBuffers[v - voices]) }
        } else {
            b = Int(voiceTailBuffers[v - voices])
        }
        let t = tailBuffers.pointee
        // A head is made only for sounds played once through; a voice told to loop it wraps
        // within the head.
        if v.pointee.loopsRemaining != 0 { return false }
        if b < 0 || b >= t.count {
            tailUnderrunCounter.add(1, ordering: .relaxed)
            return false
        }
        return extendTail(v, buffer: b)
    }

    /// Voice `v`, at the end of what it may play of its tail's buffer `b` (or at its head's
    /// end), goes on as far as the filler has read: true when that takes it further; false
    /// (counted) when not, and the voice ends.
    @_noLocks @_noAllocation
    func extendTail(_ v: UnsafeMutablePointer<Voice>, buffer b: Int) -> Bool {
        let t = tailBuffers.pointee
        let filled = t.filled![b].load(ordering: .acquiring)
        let length = t.length![b]
        let head = t.head![b]
        // The last frame read is the neighbour of the one before, for interpolation, until the
        // whole tail is read.
        let end = filled >= length ? head + length : head + filled - 1
        if end <= v.pointee.position {
            tailUnderrunCounter.add(1, ordering: .relaxed)
            return false
        }
        let index = Int(t.slot![b])
        // The sound's peak up to there, as the filler read it.
        let peak = Float(bitPattern: t.peak![b].load(ordering: .relaxed))
        // The ring's window from the voice's place: the pass through the ring it is in and the
        // next, mapped as one run (frame head + k × capacity at the buffer's start). What was
        // read lies within a capacity of the floor, which is behind the voice.
        let capacity = Int64(t.capacity)
        let k = (v.pointee.position - head) / capacity
        let left = t.left![b] - Int(head + k * capacity)
        let right = sounds[index].isStereo ? t.right![b] - Int(head + k * capacity) : left
        sounds[index].left = left
        sounds[index].right = right
        sounds[index].frames = min(end, v.pointee.position + capacity)
        sounds[index].peak = peak
        sounds[index].tailBuffer = filled >= length ? -1 : Int32(b)
        // A tail longer than its ring: nothing before the window, nor before the floor (the
        // filler may be writing over it), is there to go back to.
        if length > capacity {
            sounds[index].tailStart = max(sounds[index].tailStart, head + max(k * capacity, t.floor![b].load(ordering: .relaxed)))
        }
        let whole = sounds[index]
        v.pointee.sound = Int32(index)
        v.pointee.left = whole.left
        v.pointee.right = whole.right
        v.pointee.frames = whole.frames
        v.pointee.peak = peak
        v.pointee.peakGain = Voice.peakGain(peak, v.pointee.panLeft, v.pointee.panRight)
        return true
    }

    /// `slot`'s frames, or for a tail buffer's slot while its tail is partly read, the whole
    /// sound's.
    @_noLocks @_noAllocation
    func tailFrames(of slot: SoundSlot) -> Int64 {
        let b = Int(slot.tailBuffer)
        let t = tailBuffers.pointee
        if b < 0 || b >= t.count { return slot.frames }
        return t.head![b] + t.length![b]
    }

    /// Publishes, for each buffer the filler is reading, how far its voice (or the declick tail
    /// that took it over) may read by the end of the next period, or that none plays it any more.
    /// At the end of each period.
    @_noLocks @_noAllocation @inline(__always)
    func publishTailNeeds(frameCount: Int) {
        if tailBuffers.pointee.count == 0 { return }
        publishNeeds(frameCount: frameCount)
    }

    @_noLocks @_noAllocation
    private func publishNeeds(frameCount: Int) {
        let t = tailBuffers.pointee
        if frameCount > t.longestPeriod!.pointee { t.longestPeriod!.pointee = frameCount }
        // Two periods at the fastest the voice may play by then.
        let span = Double(2 * t.longestPeriod!.pointee)
        let tables = instrumentTables.pointee
        for b in 0..<t.count {
            let generation = t.generation![b]
            if t.done![b].load(ordering: .relaxed) == generation { continue }
            if t.abandoned![b].load(ordering: .relaxed) == generation { continue }
            let o = Int(t.owner![b])
            // How far its reader may read, and where it is (the voice and the declick tail that
            // took it over: the further reach, the lower place).
            var reach: Int64 = -1, at = Int64.max
            if o >= 0 {
                if voiceTailBuffers[o] == Int32(b), voices[o].isActive {
                    var rate = max(4, voices[o].rate)
                    let i = Int(voiceControls[o].instrument)
                    if i >= 0 && i < tables.instrumentCount { rate = max(rate, Double(tables.instruments[i].fastestRate)) }
                    reach = voices[o].position + Int64(rate * span) + 3
                    at = voices[o].position
                }
                if tailTailBuffers[o] == Int32(b), tails[o].isActive {
                    let rate = max(4, tails[o].rate)
                    reach = max(reach, tails[o].position + Int64(rate * span) + 3)
                    at = min(at, tails[o].position)
                }
            }
            if reach < 0 {
                t.abandoned![b].store(generation, ordering: .releasing)
                continue
            }
            let floor = max(t.floor![b].load(ordering: .relaxed), min(t.length![b], max(0, at - t.head![b])))
            // A tail longer than its ring: before the floor is what the filler may write over
            // from now on, so no seek or rewind goes back there (set before the floor is).
            if t.length![b] > Int64(t.capacity) {
                let slot = Int(t.slot![b])
                sounds[slot].tailStart = max(sounds[slot].tailStart, t.head![b] + floor)
            }
            t.floor![b].store(floor, ordering: .releasing)
            t.need![b].store(min(t.length![b], max(0, reach - t.head![b])), ordering: .relaxed)
        }
    }
}
