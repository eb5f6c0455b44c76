/// A key of the voice list: a player's voice (`2 × player`) or its declick tail (`2 × player + 1`),
/// so that sorted keys walk each player's voice, then its tail, in player order.
struct VoiceKey: Equatable, BitwiseCopyable {
    var rawValue: Int

    @_noLocks @_noAllocation @inline(__always)
    init(rawValue: Int) { self.rawValue = rawValue }

    @_noLocks @_noAllocation @inline(__always)
    init(player: Int, tail: Bool) { rawValue = 2 &* player &+ (tail ? 1 : 0) }

    var player: Int {
        @_noLocks @_noAllocation @inline(__always) get { rawValue >> 1 }
    }

    /// A declick tail's key (a player's voice's otherwise).
    var isTail: Bool {
        @_noLocks @_noAllocation @inline(__always) get { rawValue & 1 != 0 }
    }

    /// The key of the same player's tail.
    var tail: VoiceKey {
        @_noLocks @_noAllocation @inline(__always) get { VoiceKey(rawValue: rawValue | 1) }
    }

    /// Whether either of two keys is a tail's (one test for both).
    @_noLocks @_noAllocation @inline(__always)
    static func eitherIsTail(_ a: VoiceKey, _ b: VoiceKey) -> Bool { (a.rawValue | b.rawValue) & 1 != 0 }
}

/// The voices the render thread has work for, as sorted keys (`VoiceKey`). A voice is listed while it sounds, and also while it is
/// metered or was touched by a command this period (so its status is published once more); the
/// end of each period drops the others. Mixing walks this list instead of every player slot, in
/// key order, so the sum is formed in the same order as a walk over all slots would form it.
///
/// A copyable handle on unsafe storage allocated once (like `UnsafeCommandSchedule`); `Engine`
/// allocates and frees it. Render thread only.
struct UnsafeVoiceList {
    private let keys: UnsafeMutablePointer<UInt32>
    /// Per key, 1 while the key is in `keys`.
    private let listed: UnsafeMutablePointer<UInt8>
    /// [0] = number of keys.
    private let state: UnsafeMutablePointer<Int>

    static func allocate(players: Int) -> UnsafeVoiceList {
        let capacity = 2 * players
        let listed = UnsafeMutablePointer<UInt8>.allocate(capacity: capacity)
        listed.initialize(repeating: 0, count: capacity)
        let state = UnsafeMutablePointer<Int>.allocate(capacity: 1)
        state.initialize(to: 0)
        return UnsafeVoiceList(keys: .allocate(capacity: capacity), listed: listed, state: state)
    }

    func deallocate() {
        keys.deallocate()
        listed.deallocate()
        state.deallocate()
    }

    var count: Int {
        @_noLocks @_noAllocation @inline(__always) get { state[0] }
    }

    @_noLocks @_noAllocation @inline(__always)
    func key(at index: Int) -> VoiceKey { VoiceKey(rawValue: Int(keys[index])) }

    /// Lists the voice of `player` (or its tail), keeping the keys sorted; nothing if listed.
    @_noLocks @_noAllocation
    func insert(player: Int, tail: Bool) {
        let key = UInt32(VoiceKey(player: player, tail: tail).rawValue)
        if listed[Int(key)] != 0 { return }
        listed[Int(key)] = 1
        var i = state[0]
        // From the end: cheapest when the new key is among the highest listed.
        while i > 0 && keys[i - 1] > key {
            keys[i] = keys[i - 1]
            i -= 1
        }
        keys[i] = key
        state[0] += 1
    }

    /// Compaction, in order: `keep(i, at: kept)` moves key `i` to index `kept` (≤ i); `drop(i)`
    /// unlists it; `truncate(kept)` ends the pass.
    @_noLocks @_noAllocation @inline(__always)
    func keep(_ index: Int, at kept: Int) { keys[kept] = keys[index] }

    @_noLocks @_noAllocation @inline(__always)
    func drop(_ index: Int) { listed[Int(keys[index])] = 0 }

    @_noLocks @_noAllocation @inline(__always)
    func truncate(_ count: Int) { state[0] = count }
}
