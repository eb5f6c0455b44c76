import Foundation
import SamplerCore
import SoundFiles

/// Schedules buffers, segments and files on a timeline, like AVAudioPlayerNode, with every item
/// starting on an exact frame: back-to-back items join with no gap and no overlap.
///
/// Two timelines: the node (device) timeline is the device clock; the player timeline counts
/// frames from `play()`, stands still while paused, and goes back to 0 on `stop()`. Sample times
/// given to `schedule…(at:)` are player-timeline times; host times are converted through the
/// device clock.
///
/// Threads: control threads only (the session serializes calls). Completion handlers run on the
/// session's event thread, once each.
///
/// `@unchecked Sendable` by contract: its mutable state (items, releases, timeline origin) is
/// touched only with the session's lock held (its API takes it; the event thread calls its
/// `SessionMember` methods under it) or in deinit.
public final class PlayerNode: SessionMember, @unchecked Sendable {
    public let session: AudioSession
    /// The most items that can wait in the schedule at once.
    public let scheduleCapacity: Int
    let player: Int

    /// The named output it plays into (one of the session's `Configuration.outputs`); nil:
    /// the main mix. Any thread.
    public var output: String? { session.output(ofPlayer: player) }

    /// Routes it to the session's output `name` (nil: the main mix): `AudioSession.route`.
    public func setOutput(_ name: String?) throws(SamplerKitError) { try session.route(player: player, to: name) }

    private struct Item {
        var sound: SoundID
        /// For a file streamed from disk: the reader filling the ring `sound` names.
        var reader: StreamReader?
        /// A segment that ends before its source does: a stop is sent for its end frame.
        var stopsAtEnd = false
        var frames: Int64
        var loops: Bool
        /// Start on the player timeline.
        var playerStart: Int64
        var callbackType: CompletionCallbackType
        var handler: (() -> Void)?
        var tag: UInt32
        var sent = false
        /// Device frame of its end, once known (it has been sent and does not loop).
        var deviceEnd: Frame?
        var consumed = false
    }
    private var items: [Item] = []
    /// Buffers no longer scheduled whose voice may still be playing them until a device frame:
    /// their sounds are unregistered once that frame has been rendered, so the engine's sound
    /// table recycles them and memory stays bounded however many buffers are scheduled.
    private var releases: [Release] = []
    private struct Release {
        var sound: SoundID
        var reader: StreamReader?
        var after: Frame
    }
    /// Device frame of player-timeline frame 0, while playing or paused.
    private var playerOrigin: Frame?
    private var pausedAt: Frame?
    /// Player-timeline frame where the last scheduled item ends (where a nil-time item starts).
    private var scheduleEnd: Int64 = 0

    /// A node with its own player slot in `session`.
    public init(session: AudioSession, scheduleCapacity: Int = 256) throws {
        self.session = session
        self.scheduleCapacity = scheduleCapacity
        player = try session.allocatePlayer(for: PlaceholderMember())
        items.reserveCapacity(scheduleCapacity)
        session.lock.withLock { session.held.replaceMember(player, with: self) }
    }

    deinit {
        // The release's stop reaches the render thread before any of these slots is reused.
        let unplayed = items.filter { !$0.consumed }.map { Release(sound: $0.sound, reader: $0.reader, after: 0) }
        let releases = releases
        session.releasePlayer(player) { held in
            let now = held.earliestStartFrame
            for var r in unplayed {
                r.after = now
                PlayerNode.release(r, held)
            }
            for r in releases { PlayerNode.release(r, held) }
        }
    }

    /// Whether the node is playing (not stopped, not paused).
    public var isPlaying: Bool { session.lock.withLock { playerOrigin != nil && pausedAt == nil } }

    /// The device time of the last rendered period.
    public var lastRenderTime: AudioTime { session.lastRenderTime }

    /// The output's playback latency in seconds (JACK's port latency).
    public var latency: Double { Double(session.outputLatencyFrames) / max(session.sampleRate, 1) }
    /// Same as `latency` here: the time from render to the port's output.
    public var outputPresentationLatency: Double { latency }

    // MARK: Scheduling

    /// Schedules `buffer` at `when` (player-timeline sample time or host time; nil: right after
    /// what is already scheduled). Throws when the schedule is full.
    public func scheduleBuffer(_ buffer: Sound, at when: AudioTime? = nil, options: BufferOptions = [],
                               completionCallbackType: CompletionCallbackType = .dataConsumed,
                               completionHandler: (() -> Void)? = nil) throws {
        let id = try session.register(buffer)
        try enqueue(sound: id, reader: nil, frames: Int64(buffer.frameCount), stopsAtEnd: false, at: when, options: options,
                    completionCallbackType: completionCallbackType, completionHandler: completionHandler)
    }

    /// Adds an item playing `sound` (registered, or a ring `reader` fills) to the schedule; on
    /// failure gives the sound (or ring) back.
    private func enqueue(sound id: SoundID, reader: StreamReader?, frames: Int64, stopsAtEnd: Bool, at when: AudioTime?,
                         options: BufferOptions, completionCallbackType: CompletionCallbackType,
                         completionHandler: (() -> Void)?) throws {
        var callbacks: [() -> Void] = []
        try session.lock.withLock {
            guard items.filter({ !$0.consumed }).count < scheduleCapacity else {
                release(Release(sound: id, reader: reader, after: session.engine.renderedFrame))
                throw SamplerError("the player node's schedule is full (\(scheduleCapacity) items)")
            }
            items.removeAll { $0.consumed }
            var start: Int64
            if let when {
                start = playerFrame(for: when)
            } else {
                // Right after what is scheduled; on a node that ran dry, as soon as possible (as
                // AVAudioPlayerNode does), never on a frame already past.
                start = playerOrigin == nil ? scheduleEnd : max(scheduleEnd, currentPlayerFrame(earliest: true))
            }
            if options.contains(.interrupts) || options.contains(.interruptsAtLoop) {
                let now = currentPlayerFrame(earliest: true)
                if when == nil { start = now }
                if options.contains(.interruptsAtLoop), let looping = items.last(where: { $0.loops && $0.sent }) {
                    // The end of the loop pass under way at the earliest frame possible.
                    let passes = max(1, (now - looping.playerStart + looping.frames - 1) / looping.frames)
                    start = looping.playerStart + passes * looping.frames
                }
                // Everything not yet finished is replaced: its handler runs now (consumed).
                session.held.send(Command.cancelPending(player: player))
                for i in items.indices where !items[i].consumed {
                    items[i].consumed = true
                    if let h = items[i].handler { callbacks.append(h) }
                    // Playing until the new item starts, at the latest.
                    releases.append(Release(sound: items[i].sound, reader: items[i].reader,
                                            after: (playerOrigin ?? session.held.earliestStartFrame) + max(start, 0)))
                }
                items.removeAll { $0.consumed }
                if playerOrigin != nil && pausedAt == nil { resendAll() }
            }
            let item = Item(sound: id, reader: reader, stopsAtEnd: stopsAtEnd, frames: frames, loops: options.contains(.loops),
                            playerStart: start, callbackType: completionCallbackType, handler: completionHandler,
                            tag: session.held.newTag())
            items.append(item)
            scheduleEnd = item.loops ? Int64.max / 4 : start + item.frames
            if playerOrigin != nil && pausedAt == nil { send(index: items.count - 1) }
        }
        callbacks.forEach { $0() }
    }

    /// Schedules the valid frames (`frameLength`) of `buffer` (a copy is made: the program may
    /// refill the buffer at once, as AVAudioPCMBuffer allows).
    public func scheduleBuffer(_ buffer: AudioBuffer, at when: AudioTime? = nil, options: BufferOptions = [],
                               completionCallbackType: CompletionCallbackType = .dataConsumed,
                               completionHandler: (() -> Void)? = nil) throws {
        try scheduleBuffer(buffer.makeSound(), at: when, options: options, completionCallbackType: completionCallbackType,
                           completionHandler: completionHandler)
    }

    /// Schedules the whole of `file`, streamed from disk (at the session's rate) through a ring
    /// of `preloadSeconds`, as a streamed `AudioPlayer` plays: the file is never held in memory.
    /// Returns once the ring holds its first `preloadSeconds` (the disk read happens here, on the
    /// calling thread's time, not under the session's lock).
    public func scheduleFile(_ file: AudioFile, at when: AudioTime? = nil, preloadSeconds: Double = 2,
                             completionCallbackType: CompletionCallbackType = .dataConsumed,
                             completionHandler: (() -> Void)? = nil) throws {
        try scheduleSegment(file, startingFrame: 0, frameCount: Int(file.length), at: when, preloadSeconds: preloadSeconds,
                            completionCallbackType: completionCallbackType, completionHandler: completionHandler)
    }

    /// Schedules frames `startingFrame ..< startingFrame + frameCount` of `file` (frames at the
    /// file's own rate, as AVAudioFile counts them), streamed from disk as `scheduleFile` does:
    /// the segment refers to the file's frames, nothing is copied into memory.
    public func scheduleSegment(_ file: AudioFile, startingFrame: Int64, frameCount: Int, at when: AudioTime? = nil,
                                preloadSeconds: Double = 2,
                                completionCallbackType: CompletionCallbackType = .dataConsumed,
                                completionHandler: (() -> Void)? = nil) throws {
        let rate = session.sampleRate
        guard rate > 0 else { throw SamplerKitError.session("\(file.url.lastPathComponent): the session has no server to stream to") }
        guard startingFrame >= 0, startingFrame < file.length, frameCount > 0 else {
            throw SamplerKitError.outOfRange("segment \(startingFrame) + \(frameCount) frames of \(file.url.lastPathComponent) (\(file.length) frames)")
        }
        let ratio = rate / file.processingFormat.sampleRate
        let first = Int64((Double(startingFrame) * ratio).rounded())
        let end = Int64((Double(min(startingFrame + Int64(frameCount), file.length)) * ratio).rounded())
        let capacity = max(Int((preloadSeconds * rate).rounded()), 4 * max(session.bufferSize, 256))
        let ring = try session.lock.withLock {
            try session.streaming.ring(capacity: capacity, channelCount: file.processingFormat.channelCount, sampleRate: rate,
                                       engine: session.engine)
        }
        let reader: StreamReader
        do { reader = try StreamReader(file: file.file, ring: ring.ring) } catch {
            session.lock.withLock { session.streaming.recycle(ring: ring, engine: session.engine) }
            throw SamplerKitError.soundFile(error)
        }
        session.streaming.streamer.add(reader)
        // Filled before it is scheduled, outside the session's lock.
        guard reader.waitUntilPrimed(reader.cue(at: first, loops: 0)) else {
            session.lock.withLock { release(Release(sound: ring.id, reader: reader, after: session.engine.renderedFrame)) }
            throw SamplerKitError.soundFile(SoundFileError(file: file.url.path, reason: .notReadable("the disk did not deliver in time")))
        }
        try enqueue(sound: ring.id, reader: reader, frames: max(1, end - first), stopsAtEnd: end < reader.frameCount, at: when,
                    options: [], completionCallbackType: completionCallbackType, completionHandler: completionHandler)
    }

    /// Schedules frames `startingFrame ..< startingFrame + frameCount` of `sound` (clamped to
    /// it), without copying them: the segment reads the sound's own samples.
    public func scheduleSegment(_ sound: Sound, startingFrame: Int64, frameCount: Int, at when: AudioTime? = nil,
                                completionCallbackType: CompletionCallbackType = .dataConsumed,
                                completionHandler: (() -> Void)? = nil) throws {
        let start = Int(max(0, min(startingFrame, Int64(sound.frameCount - 1))))
        try scheduleBuffer(Sound(slicing: sound, from: start, count: frameCount), at: when,
                           completionCallbackType: completionCallbackType, completionHandler: completionHandler)
    }

    /// Schedules the whole of `file`.
    public func scheduleFile(_ file: Sound, at when: AudioTime? = nil,
                             completionCallbackType: CompletionCallbackType = .dataConsumed,
                             completionHandler: (() -> Void)? = nil) throws {
        try scheduleBuffer(file, at: when, completionCallbackType: completionCallbackType, completionHandler: completionHandler)
    }

    // MARK: Transport

    /// Nothing to do: buffers are in memory already. Kept for AVAudioPlayerNode parity.
    public func prepare(withFrameCount frameCount: Int) {}

    /// Starts (or resumes) the player timeline at `when` (nil: the earliest frame possible).
    public func play(at when: AudioTime? = nil) {
        session.lock.withLock {
            let at = session.held.frame(for: when)
            if let paused = pausedAt, let origin = playerOrigin {
                let resumed = origin + (at - paused)
                playerOrigin = resumed
                pausedAt = nil
                session.held.send(Command(kind: .resume, player: Int32(player), frame: at))
                for i in items.indices where !items[i].consumed && items[i].sent {
                    let item = items[i]
                    items[i].deviceEnd = item.loops ? nil : resumed + item.playerStart + item.frames
                    // A segment playing through the pause lost its end-stop to the pause's
                    // cancel: it stops on its shifted end (else it played on past it, into the
                    // rest of its file).
                    if item.stopsAtEnd && !item.loops && origin + item.playerStart + item.frames >= paused {
                        session.held.send(.stop(player: player, at: resumed + item.playerStart + item.frames))
                    }
                }
                resendPending(from: at)
                return
            }
            guard playerOrigin == nil else { return }
            playerOrigin = at
            resendAll()
        }
    }

    /// Pauses at the earliest frame possible; the player timeline stands still until `play()`.
    /// Nothing is dropped or repeated: an item that starts before the pause frame plays up to it
    /// and on from there after `play()`; an item that starts on it or later starts after `play()`.
    public func pause() {
        session.lock.withLock {
            guard playerOrigin != nil, pausedAt == nil else { return }
            let at = session.held.earliestStartFrame
            pausedAt = at
            // Items starting on the pause frame or later are sent again, shifted, on resume;
            // those starting before it stay queued and play up to the pause. (Cancel first: the
            // cancel would also remove the pause.)
            session.held.send(Command.cancelPending(player: player, from: at))
            session.held.send(Command(kind: .pause, player: Int32(player), frame: at))
            for i in items.indices where items[i].sent && playerOrigin! + items[i].playerStart >= at {
                items[i].sent = false
            }
        }
    }

    /// Stops, forgets everything scheduled (running each item's completion handler) and resets
    /// the player timeline to 0.
    public func stop() {
        var callbacks: [() -> Void] = []
        session.lock.withLock {
            session.held.send(Command.cancelPending(player: player))
            session.held.send(.stop(player: player))
            for item in items where !item.consumed {
                if let h = item.handler { callbacks.append(h) }
                releases.append(Release(sound: item.sound, reader: item.reader, after: session.held.earliestStartFrame))
            }
            items.removeAll()
            playerOrigin = nil
            pausedAt = nil
            scheduleEnd = 0
        }
        callbacks.forEach { $0() }
    }

    // MARK: Timelines

    /// The player-timeline time of node (device) time `nodeTime`, or nil when not playing.
    public func playerTime(forNodeTime nodeTime: AudioTime) -> AudioTime? {
        session.lock.withLock {
            guard let origin = playerOrigin else { return nil }
            let device = pausedAt.map { min($0, session.held.frame(for: nodeTime)) } ?? session.held.frame(for: nodeTime)
            return AudioTime(sampleTime: device - origin, atRate: session.held.sampleRate)
        }
    }

    /// The node (device) time of player-timeline time `playerTime`, or nil when not playing.
    public func nodeTime(forPlayerTime playerTime: AudioTime) -> AudioTime? {
        session.lock.withLock {
            guard let origin = playerOrigin, let s = playerTime.sampleTime else { return nil }
            return AudioTime(sampleTime: origin + s, atRate: session.held.sampleRate)
        }
    }

    // MARK: Internals (session lock held)

    private func playerFrame(for time: AudioTime) -> Int64 {
        if let s = time.sampleTime { return s }
        let device = session.held.frame(for: time)
        return device - (playerOrigin ?? session.held.earliestStartFrame)
    }

    private func currentPlayerFrame(earliest: Bool) -> Int64 {
        guard let origin = playerOrigin else { return 0 }
        return (pausedAt ?? session.held.earliestStartFrame) - origin
    }

    private func resendAll() {
        for i in items.indices where !items[i].consumed { send(index: i) }
    }

    private func resendPending(from frame: Frame) {
        for i in items.indices where !items[i].consumed && !items[i].sent { send(index: i) }
    }

    private func send(index i: Int) {
        guard let origin = playerOrigin else { return }
        let item = items[i]
        let at = origin + item.playerStart
        session.held.send(.start(player: player, sound: item.sound, at: at, loops: item.loops ? -1 : 0, tag: item.tag))
        // A segment's source goes on past its end: stopped there (an item starting on the same
        // frame is sent later, so it starts after this stop).
        if item.stopsAtEnd { session.held.send(.stop(player: player, at: at + item.frames)) }
        items[i].sent = true
        items[i].deviceEnd = item.loops ? nil : at + item.frames
    }

    /// Gives an item's sound back now: unregisters a buffer; a streamed file's ring goes back
    /// to the session's spares. Either is reused only once the render thread confirms that no
    /// voice reads it. Session lock held.
    private func release(_ r: Release) { PlayerNode.release(r, session.held) }

    private static func release(_ r: Release, _ held: AudioSession.Held) {
        if let reader = r.reader {
            held.streaming.recycle(reader: reader, id: r.sound, engine: held.engine)
        } else {
            held.unregister(r.sound)
        }
    }

    func handle(_ event: Event, session: AudioSession) -> [() -> Void] { [] }

    func tick(session: AudioSession) -> [() -> Void] {
        let rendered = session.engine.renderedFrame
        if !releases.isEmpty {
            for r in releases where r.after < rendered { release(r) }
            releases.removeAll { $0.after < rendered }
        }
        guard playerOrigin != nil, pausedAt == nil else { return [] }
        var callbacks: [() -> Void] = []
        var heard: Frame?
        for i in items.indices where !items[i].consumed {
            guard let end = items[i].deviceEnd else { continue }
            let done: Bool
            switch items[i].callbackType {
            case .dataConsumed, .dataRendered:
                done = rendered >= end
            case .dataPlayedBack:
                if heard == nil { heard = session.held.deviceCurrentFrame - Frame(session.held.outputLatencyFrames) }
                done = rendered >= end && heard! >= end
            }
            if done {
                items[i].consumed = true
                if let h = items[i].handler { callbacks.append(h) }
                // Played to its end: the voice has left it (the next item, or silence).
                release(Release(sound: items[i].sound, reader: items[i].reader, after: rendered))
            }
        }
        return callbacks
    }

    func interruptionBegan(session: AudioSession) -> [() -> Void] { [] }
    func interruptionEnded(session: AudioSession) -> [() -> Void] { [] }
}
