/// The voices the render thread has work for, as sorted keys: `2 × player` for a player's voice,
/// `2 × player + 1` for its fading tail. A voice is listed while it sounds, and also while it is
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
    func key(at index: Int) -> UInt32 { keys[index] }

    /// Lists the voice of `player` (or its tail), keeping the keys sorted; nothing if listed.
    @_noLocks @_noAllocation
    func insert(player: Int, tail: Bool) {
        let key = UInt32(2 * player + (tail ? 1 : 0))
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
