import Synchronization

/// A request that the render thread confirm that nothing refers to a sound any more
/// (`Engine.requestUnreferenced`, `Engine.isUnreferenced`).
public struct UnreferencedRequest: Sendable, Equatable {
    public let sound: SoundID
    /// Requests are numbered in the order they are made; a confirmation covers its own and
    /// every earlier request for the same slot.
    public let sequence: Int64

    /// The command that carries it to the render thread.
    var command: Command {
        var c = Command(kind: .confirmUnreferenced, player: 0, frame: Command.immediately)
        c.sound = sound.rawValue
        c.request = sequence
        return c
    }
}

/// The render thread's side of sound ownership: the slots it has been asked about and has not
/// confirmed yet, and, per slot, the latest request it has confirmed (published for the control
/// side). One rule for every path that frees sound memory or reuses a stream's ring: the control
/// side asks (`Engine.requestUnreferenced`) after its last command naming the sound, and frees
/// only once the render thread, which alone knows what its voices read, has confirmed.
///
/// A copyable handle on storage allocated once, so that the render thread uses it without
/// reference counting. `pending`, `requested`, `marks` and `state` are the render thread's;
/// `confirmed` is written by it (releasing) and read by the control side (acquiring).
struct UnsafeOwnership {
    let slots: Int
    /// Slots asked about and not yet confirmed: `state[0]` of them.
    private let pending: UnsafeMutablePointer<Int32>
    /// Per slot, the latest request received.
    private let requested: UnsafeMutablePointer<Int64>
    /// Per slot, the stamp of the last check that found a reference to it.
    private let marks: UnsafeMutablePointer<UInt32>
    /// [0]: pending count; [1]: the current check's stamp.
    private let state: UnsafeMutablePointer<Int>
    /// Per slot, the latest request confirmed (0: none).
    private let confirmations: UnsafeMutablePointer<Atomic<Int64>>

    static func allocate(slots: Int) -> UnsafeOwnership {
        let o = UnsafeOwnership(slots: slots, pending: .allocate(capacity: max(1, slots)), requested: .allocate(capacity: max(1, slots)),
                                marks: .allocate(capacity: max(1, slots)), state: .allocate(capacity: 2),
                                confirmations: .allocate(capacity: max(1, slots)))
        // Written once here, so their pages are resident before the render thread touches them.
        o.pending.initialize(repeating: 0, count: max(1, slots))
        o.requested.initialize(repeating: 0, count: max(1, slots))
        o.marks.initialize(repeating: 0, count: max(1, slots))
        o.state.initialize(repeating: 0, count: 2)
        for i in 0..<max(1, slots) { (o.confirmations + i).initialize(to: Atomic(0)) }
        return o
    }

    func deallocate() {
        pending.deallocate()
        requested.deallocate()
        marks.deallocate()
        state.deallocate()
        confirmations.deinitialize(count: max(1, slots))
        confirmations.deallocate()
    }

    /// The latest request confirmed for `slot`. Control side.
    func confirmed(slot: Int) -> Int64 {
        guard slot >= 0, slot < slots else { return .max }
        return confirmations[slot].load(ordering: .acquiring)
    }

    var pendingCount: Int {
        @_noLocks @_noAllocation get { state[0] }
    }

    /// Notes request `sequence` about `slot`. Render thread.
    @_noLocks @_noAllocation
    func note(slot: Int32, sequence: Int64) {
        let i = Int(slot)
        guard i >= 0, i < slots else { return }
        if requested[i] <= confirmations[i].load(ordering: .relaxed) {
            // Not pending yet (a slot is listed once, however many requests name it).
            pending[state[0]] = slot
            state[0] += 1
        }
        requested[i] = max(requested[i], sequence)
    }

    /// Starts a check: a fresh stamp for `mark`.
    @_noLocks @_noAllocation
    func beginCheck() {
        state[1] = state[1] == Int(UInt32.max) ? 1 : state[1] + 1
    }

    /// Something the render thread may still read refers to `sound`.
    @_noLocks @_noAllocation @inline(__always)
    func mark(_ sound: Int32) {
        let i = Int(sound)
        if i >= 0 && i < slots { marks[i] = UInt32(truncatingIfNeeded: state[1]) }
    }

    /// Whether this check has marked `sound`.
    @_noLocks @_noAllocation @inline(__always)
    func isMarked(_ sound: Int32) -> Bool {
        let i = Int(sound)
        return i >= 0 && i < slots && marks[i] == UInt32(truncatingIfNeeded: state[1])
    }

    /// Confirms every pending slot the check did not mark, and keeps the others pending.
    @_noLocks @_noAllocation
    func endCheck() {
        let stamp = UInt32(truncatingIfNeeded: state[1])
        var kept = 0
        for k in 0..<state[0] {
            let slot = pending[k], i = Int(slot)
            if marks[i] == stamp {
                pending[kept] = slot
                kept += 1
            } else {
                confirmations[i].store(requested[i], ordering: .releasing)
            }
        }
        state[0] = kept
    }
}

extension Engine {
    /// Confirms the requests about sounds nothing refers to any more: no voice or tail playing or
    /// paused on them, no start waiting for its frame, no instrument (in use, or published to be
    /// swapped in) naming them. At the end of each period while requests are pending.
    @_noLocks @_noAllocation
    func confirmUnreferencedSounds() {
        guard ownership.pendingCount > 0 else { return }
        ownership.beginCheck()
        // Every sounding voice and tail (paused ones included) is in the voice list: the mixer
        // plays only what is listed.
        for i in 0..<voiceList.count {
            let v = voice(voiceList.key(at: i))
            if v.pointee.isActive { ownership.mark(v.pointee.sound) }
        }
        schedule.markSounds(ownership)
        instrumentTables.pointee.markSounds(ownership)
        if instrumentSwap.load(ordering: .acquiring) == InstrumentSwap.published {
            pendingInstruments.pointee.markSounds(ownership)
        }
        // What a sound marked goes on in at a release (`SoundSlot.continuation`) is kept with it.
        let withContinuations = continuationCount.load(ordering: .acquiring) > 0
        for i in 0..<(withContinuations ? ownership.slots : 0) where ownership.isMarked(Int32(i)) {
            let c = sounds[i].continuation
            if c >= 0 { ownership.mark(c) }
        }
        ownership.endCheck()
    }
}
