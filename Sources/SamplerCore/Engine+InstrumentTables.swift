// Instruments set before the first period, or replaced while the engine renders (swapped in by
// the render thread on a frame, the old tables handed back to the control thread).

extension Engine {
    /// Sets the instruments `Command.trigger` and MIDI notes play. Their sounds must be
    /// registered and their players in range. Control thread only, before the engine first
    /// renders (the render thread reads the tables without synchronization).
    public func setInstruments(_ definitions: [InstrumentDefinition], controllers setup: ControllerSetup = ControllerSetup()) {
        precondition(periodCount == 0, "set the instruments before the engine starts rendering (later: replaceInstruments)")
        for d in definitions {
            precondition(d.firstPlayer >= 0 && d.firstPlayer + d.voiceCount <= configuration.maxPlayers, "instrument players out of range")
            precondition(d.layers.allSatisfy { $0.sounds.allSatisfy { isRegistered($0) } }, "unregistered sound")
        }
        instrumentTables.pointee.deallocate()
        instrumentTables.pointee = .make(definitions, controllers: setup)
        resetControllers()
    }

    /// Replaces the instruments from device frame `frame` on, while the engine renders (a patch
    /// loaded over OSC): the tables are built here and the render thread swaps them in on that
    /// frame, without waiting or allocating. What sounds keeps playing; triggers and MIDI notes
    /// from `frame` on play the new instruments. Before the first period it is `setInstruments`.
    ///
    /// Returns false, changing nothing, when an instrument's players are out of range or a sound
    /// is not registered, when the command queue is full, or while the previous replacement
    /// has not reached the render thread yet. Control thread only.
    public func replaceInstruments(_ definitions: [InstrumentDefinition], controllers setup: ControllerSetup = ControllerSetup(),
                                   at frame: Frame) -> Bool {
        for d in definitions {
            guard d.firstPlayer >= 0, d.firstPlayer + d.voiceCount <= configuration.maxPlayers,
                  d.layers.allSatisfy({ $0.sounds.allSatisfy { isRegistered($0) } }) else { return false }
        }
        if periodCount == 0 && instrumentSwap.load(ordering: .acquiring) == InstrumentSwap.idle {
            setInstruments(definitions, controllers: setup)
            return true
        }
        guard reclaimInstruments() else { return false }
        // Room first: once published, the render thread may read the tables (a check of what
        // refers to a sound, a new clock swapping them in), so they are never taken back.
        if resetUnsent { guard pushReset() else { return false } }
        guard commands.hasRoom else { return false }
        pendingInstruments.pointee.deallocate()
        pendingInstruments.pointee = .make(definitions, controllers: setup)
        instrumentSwap.store(InstrumentSwap.published, ordering: .releasing)
        let sent = send(Command(kind: .replaceInstruments, player: 0, frame: frame))
        precondition(sent, "the command queue had room for the replacement")
        return true
    }

    /// Whether the pending tables are the control thread's (no replacement waiting).
    @discardableResult
    func reclaimInstruments() -> Bool {
        switch instrumentSwap.load(ordering: .acquiring) {
        case InstrumentSwap.published: return false
        case InstrumentSwap.handedBack:
            instrumentSwap.store(InstrumentSwap.idle, ordering: .relaxed)
            return true
        default: return true
        }
    }

    /// Whether the last `replaceInstruments` has been swapped in. Control thread only.
    public var instrumentsReplaced: Bool { instrumentSwap.load(ordering: .acquiring) != InstrumentSwap.published }
}
