/// Commands waiting for their frame, kept sorted by frame (stable for equal frames), in storage
/// allocated once. A copyable handle on unsafe storage so the render thread can use it without
/// reference counting or exclusivity checks; `Engine` allocates and frees it. Render thread only.
struct UnsafeCommandSchedule {
    let capacity: Int
    private let storage: UnsafeMutablePointer<Command>
    /// [0] = index of the first command, [1] = number of commands.
    private let state: UnsafeMutablePointer<Int>

    static func allocate(capacity: Int) -> UnsafeCommandSchedule {
        let state = UnsafeMutablePointer<Int>.allocate(capacity: 2)
        state.initialize(repeating: 0, count: 2)
        let storage = UnsafeMutablePointer<Command>.allocate(capacity: capacity)
        // Written once here, so its pages are resident before the render thread touches them.
        storage.initialize(repeating: Command(kind: .stop, player: 0, frame: 0), count: capacity)
        return UnsafeCommandSchedule(capacity: capacity, storage: storage, state: state)
    }

    func deallocate() {
        storage.deallocate()
        state.deallocate()
    }

    /// `index` (below twice the capacity) as a slot: a subtraction, not a division (the
    /// render thread inserts every controller message here).
    @_noLocks @_noAllocation @inline(__always)
    private func wrap(_ index: Int) -> Int { index >= capacity ? index - capacity : index }

    var count: Int {
        @_noLocks @_noAllocation get { state[1] }
    }

    /// Inserts `command` after every command with a frame ≤ its frame; `false` when full.
    /// Inlined: a command built field by field and then passed in memory is read back whole
    /// before its stores have landed (a store-forwarding stall, most of a controller message's
    /// cost).
    @_noLocks @_noAllocation @inline(__always)
    func insert(_ command: Command) -> Bool {
        let head = state[0], count = state[1]
        if count == capacity { return false }
        var i = count
        while i > 0 {
            let previous = storage[wrap(head + i - 1)]
            if previous.frame <= command.frame { break }
            storage[wrap(head + i)] = previous
            i -= 1
        }
        storage[wrap(head + i)] = command
        state[1] = count + 1
        return true
    }

    /// The frame of the earliest command; only valid when `count > 0`.
    var firstFrame: Frame {
        @_noLocks @_noAllocation get { storage[state[0]].frame }
    }

    /// Removes every command for `player` from frame `first` on, keeping the others in order.
    /// Triggers and instrument mixes are not player commands (their `player` field names an
    /// instrument) and stay; with `triggers`, instead, instrument `player`'s triggers go and
    /// everything else stays.
    @_noLocks @_noAllocation
    func removeAll(forPlayer player: Int32, from first: Frame = .min, triggers: Bool = false) {
        let head = state[0], count = state[1]
        var kept = 0
        for i in 0..<count {
            let command = storage[wrap(head + i)]
            var isTrigger = false, isInstrumentCommand = false
            switch command.kind {
            case .trigger, .release: isTrigger = true; isInstrumentCommand = true
            // A routing is the player's for good (not one sound's): a cancel never drops it.
            case .setInstrumentMix, .replaceInstruments, .setOutput, .controller: isInstrumentCommand = true
            default: break
            }
            let selected = triggers ? isTrigger : !isInstrumentCommand
            if command.player != player || !selected || command.frame < first {
                storage[wrap(head + kept)] = command
                kept += 1
            }
        }
        state[1] = kept
    }

    /// Marks the sound of every start waiting here (see `UnsafeOwnership`).
    @_noLocks @_noAllocation
    func markSounds(_ ownership: UnsafeOwnership) {
        let head = state[0], count = state[1]
        for i in 0..<count {
            let command = storage[wrap(head + i)]
            if case .start = command.kind { ownership.mark(command.sound) }
        }
    }

    @_noLocks @_noAllocation
    func removeFirst() -> Command {
        let command = storage[state[0]]
        state[0] = wrap(state[0] + 1)
        state[1] -= 1
        return command
    }
}
