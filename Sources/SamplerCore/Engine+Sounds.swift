// Sounds: registering them in the table the render thread reads, and releasing them only once
// it has confirmed that nothing refers to them.

extension Engine {
    /// Makes `sound` playable and returns its id. The engine keeps the sound alive for its own
    /// lifetime. Control thread only; safe while rendering (the slot is written before any command
    /// that names it is published).
    ///
    /// Registering a sound that is registered already returns its id and counts one more
    /// registration; `unregister` withdraws one, and the slot is recycled when none is left.
    /// `continuation`: the sound a voice goes on in when its instrument's release ends its loop
    /// (`InstrumentDefinition.loopsUntilRelease`): a registered sound whose first frames are
    /// `sound`'s (`sound` a slice of it from frame 0). `sound` holds a registration of it until
    /// its own slot is released, and the render thread keeps it as long as it keeps `sound`.
    public func register(_ sound: Sound, continuation: SoundID? = nil) throws(EngineError) -> SoundID {
        // Only a slot still registered: one being retired waits for the render thread.
        if continuation == nil, let index = plainSlots[ObjectIdentifier(sound)], registrations[index] > 0, registered[index] === sound {
            registrations[index] += 1
            return SoundID(rawValue: Int32(index))
        }
        // Only one registered (else none).
        let follow = continuation.flatMap { isRegistered($0) ? $0.rawValue : nil } ?? -1
        let index = try takeSlot()
        sounds[index] = SoundSlot(left: sound.left, right: sound.right,
                                  frames: Int64(sound.frameCount), isStereo: sound.channelCount == 2, stream: nil, peak: sound.peak,
                                  loopStart: Int64(sound.loopStart), continuation: follow)
        if follow >= 0 {
            registrations[Int(follow)] += 1
            continuationCount.add(1, ordering: .releasing)
        } else {
            plainSlots[ObjectIdentifier(sound)] = index
        }
        continuations[index] = follow
        registered[index] = sound
        registrations[index] = 1
        return SoundID(rawValue: Int32(index))
    }

    /// Withdraws one registration of `id`. With the last one the engine asks the render thread
    /// to confirm that nothing refers to the sound any more, and keeps it alive until it has:
    /// a voice still playing it (a loop, a paused voice, a declick tail), a start still waiting
    /// for its frame, an instrument naming it all keep it. Only then is the slot reused and the
    /// sound released: never on a frame the control side predicts. Send no command naming `id`
    /// after this call (stop what plays it first, or it plays to its end). Streams are not
    /// unregistered (see `requestUnreferenced`). Control thread only.
    public func unregister(_ id: SoundID) {
        let index = Int(id.rawValue)
        guard index >= 0, index < registrations.count, registrations[index] > 0, registered[index] != nil else { return }
        registrations[index] -= 1
        if registrations[index] == 0 {
            retired.append(requestUnreferenced(id))
            if let sound = registered[index], plainSlots[ObjectIdentifier(sound)] == index { plainSlots[ObjectIdentifier(sound)] = nil }
        }
        reclaimIfCheap()
    }

    /// Reclaims while few sounds are retiring, and then each time their number has doubled:
    /// O(1) amortized per call, whatever the number of sounds.
    func reclaimIfCheap() {
        if !retired.isEmpty, retired.count <= 64 || retired.count >= 2 * retiredAtLastReclaim { reclaimRetiredSlots() }
    }

    /// Asks the render thread to confirm that nothing refers to sound `id`: no voice or tail
    /// playing or paused on it, no start naming it waiting for its frame, no instrument naming
    /// it. The confirmation covers every command sent before this call (they reach the render
    /// thread first); `isUnreferenced` tells when it has come. A stream's ring is reused this
    /// way (the ring stays registered). Control thread only, as `send`.
    public func requestUnreferenced(_ id: SoundID) -> UnreferencedRequest {
        lastRequestSequence += 1
        let request = UnreferencedRequest(sound: id, sequence: lastRequestSequence)
        sendUnsentRequests()
        if !unsentRequests.isEmpty || !commands.push(request.command) { unsentRequests.append(request) }
        return request
    }

    /// Whether the render thread has confirmed `request`: nothing it renders refers to the sound
    /// any more, so its memory may be freed or its ring refilled. Control thread only.
    public func isUnreferenced(_ request: UnreferencedRequest) -> Bool {
        sendUnsentRequests()
        return ownership.confirmed(slot: Int(request.sound.rawValue)) >= request.sequence
    }

    /// Sounds whose last registration was withdrawn and that the render thread has not yet
    /// released (a voice, command or instrument still refers to them). Control thread only.
    public var retiringSoundCount: Int {
        reclaimRetiredSlots()
        return retired.count
    }

    func sendUnsentRequests() {
        var sent = 0
        while sent < unsentRequests.count, commands.push(unsentRequests[sent].command) { sent += 1 }
        if sent > 0 { unsentRequests.removeFirst(sent) }
    }

    /// Sounds registered now (streams included). Control thread only.
    public var registeredSoundCount: Int { registrations.filter { $0 > 0 }.count }

    /// A free slot: a recycled one, a new one, or (when every slot is taken) one the render
    /// thread has released since.
    func takeSlot() throws(EngineError) -> Int {
        reclaimIfCheap()
        if let slot = freeSlots.popLast() { return slot }
        if registered.count < configuration.maxSounds {
            registered.append(nil)
            registrations.append(0)
            continuations.append(-1)
            return registered.count - 1
        }
        reclaimRetiredSlots()
        if let slot = freeSlots.popLast() { return slot }
        throw .tooManySounds(configuration.maxSounds)
    }

    func reclaimRetiredSlots() {
        sendUnsentRequests()
        defer { retiredAtLastReclaim = retired.count }
        guard !retired.isEmpty else { return }
        var held: [Int32] = []
        retired.removeAll { request in
            guard isUnreferenced(request) else { return false }
            let slot = Int(request.sound.rawValue)
            if registrations[slot] == 0 {
                registered[slot] = nil
                freeSlots.append(slot)
                if continuations[slot] >= 0 {
                    held.append(continuations[slot])
                    continuationCount.subtract(1, ordering: .relaxed)
                }
                continuations[slot] = -1
            }
            return true
        }
        // The continuations the released sounds held.
        for c in held { unregister(SoundID(rawValue: c)) }
    }

    /// Makes `stream` playable like a sound: a voice started on it plays the ring from its read
    /// index on, until the stream's end. The engine keeps the ring alive. Streams play at rate 1
    /// (varispeed does not apply). Control thread only.
    public func register(stream: StreamRing) throws(EngineError) -> SoundID {
        let index = try takeSlot()
        let placeholder = try! Sound(channels: Array(repeating: [0], count: stream.channelCount), sampleRate: stream.sampleRate)
        sounds[index] = SoundSlot(left: stream.state.pointee.left, right: stream.state.pointee.right, frames: .max,
                                  isStereo: stream.channelCount == 2, stream: stream.state)
        registered[index] = placeholder
        registrations[index] = 1
        continuations[index] = -1
        registeredStreams.append(stream)
        return SoundID(rawValue: Int32(index))
    }

    /// The sound registered under `id`. Control thread only.
    public func sound(_ id: SoundID) -> Sound { registered[Int(id.rawValue)]! }

    func isRegistered(_ id: SoundID) -> Bool {
        let i = Int(id.rawValue)
        return i >= 0 && i < registrations.count && registrations[i] > 0
    }
}
