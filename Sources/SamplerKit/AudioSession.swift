import Foundation
import JACKBackend
import Locking
import SamplerCore
import Synchronization

/// Something on a session that owns engine players and hears about their events.
/// Methods are called on the session's event thread with the session lock held (so they use
/// `session.held`, never the session's locking API); they return the user callbacks to run once
/// the lock is released.
protocol SessionMember: AnyObject {
    func handle(_ event: Event, session: AudioSession) -> [() -> Void]
    func tick(session: AudioSession) -> [() -> Void]
    func interruptionBegan(session: AudioSession) -> [() -> Void]
    func interruptionEnded(session: AudioSession) -> [() -> Void]
}

/// The audio session: one engine played through one JACK client (or a `ManualDevice`), plus the event thread that
/// delivers what the render thread reports to players and to user callbacks.
///
/// Threads: every method may be called from any control thread (a lock serializes them).
/// User callbacks (delegates, completion handlers, `onInterruption…`, `onRouteChange`) run on the
/// session's event thread, never on the real-time thread. Other JACK clients keep playing
/// alongside: a JACK client never silences others.
///
/// `@unchecked Sendable` by contract: every mutable property is touched only with `lock` held
/// (the public API takes it; members and the event thread use `held` inside it), except
/// `running` (an atomic) and the `deferred` work queue (a `Locked`); `engine`'s control side is
/// used only under `lock`, so it has one control thread at a time as its contract requires.
public final class AudioSession: @unchecked Sendable {
    public struct Configuration: Sendable {
        /// JACK client name.
        public var name = "sampler"
        /// JACK server name (nil: `JACK_DEFAULT_SERVER` or the default server).
        public var serverName: String?
        /// Players the engine holds (each AudioPlayer or PlayerNode takes one).
        public var maxPlayers = 64
        /// Sounds the engine holds at once (every file an AudioPlayer plays, every sample of a
        /// loaded kit); each costs about 100 bytes of table whether used or not.
        public var maxSounds = 4096
        /// Output connections: nil = the first two physical playback ports, [] = none.
        /// Wanted connections are made again when their ports come back.
        public var connections: [String]?
        /// When the server goes away, keep trying to reach one again and resume on it.
        public var reconnect = false
        /// Seconds between reconnection attempts.
        public var reconnectInterval = 0.25
        /// Seconds JACK may go without running the session's client while its server runs on
        /// (a client feeding it hangs, or JACK2's bug jackaudio/jack2#721 left it unwoken) before
        /// the session treats it as the device going away: an interruption, the client closed
        /// and, with `reconnect`, a new one opened (which JACK runs again). 0, a negative value or
        /// infinity: never.
        public var stallTimeout = 5.0
        /// Outputs besides the main mix (`out_L`/`out_R`), at most 63: each a stereo pair of
        /// ports `NAME_L`/`NAME_R` that players routed to it (`AudioPlayer.setOutput`,
        /// `PlayerNode.setOutput`) play into instead of the main mix. Not connected to anything.
        public var outputs: [String] = []
        public init() {}
    }

    public let configuration: Configuration
    public let engine: Engine
    /// Serializes the control threads and the event thread over the engine's control side, the
    /// client and every member's state. Not recursive: code that holds it uses `held` (the same
    /// calls without locking); taking it twice traps. Never held across a wait or a sleep, nor
    /// while user callbacks run.
    let lock = CheckedLock("the session lock")
    /// The session's calls for code that holds `lock`.
    var held: Held { Held(session: self) }
    private(set) var device: AudioDevice?
    /// Set for a session on a `ManualDevice`; nil: JACK.
    private let manualDevice: ManualDevice?
    fileprivate struct WeakMember { weak var value: SessionMember? }
    /// Held weakly: a player that goes away frees its slot in its deinit.
    fileprivate var members: [Int: WeakMember] = [:]
    /// Each member once (a `SamplerNode` holds many slots).
    fileprivate var liveMembers: [SessionMember] {
        var seen = Set<ObjectIdentifier>()
        return members.keys.sorted().compactMap { members[$0]?.value }.filter { seen.insert(ObjectIdentifier($0)).inserted }
    }
    fileprivate var freePlayers: [Int]
    /// The member whose instruments the engine plays (one `SamplerNode` at a time). Under `lock`.
    fileprivate var instrumentHolder: ObjectIdentifier?
    /// Each player's named output (`route(player:to:)`); absent: the main mix. Under `lock`.
    fileprivate var playerOutputs: [Int: String] = [:]
    /// Work queued by `releasePlayer`.
    private let deferred = Locked<[(Held) -> Void]>([])
    fileprivate var lastTag: UInt32 = 0
    private var eventThread: Thread?
    private let running = Atomic<Bool>(true)
    /// For tests: while set, the event thread does nothing (events wait in the engine's queue).
    let eventsHeld = Atomic<Bool>(false)
    private let finished = DispatchSemaphore(value: 0)
    private var lastReconnectAttempt = Date.distantPast
    private var wantedConnections: [String] = []
    private var lastConnectionCheck = Date.distantPast
    /// Notices JACK skipping the client; made anew for each device.
    private var watchdog: ProcessWatchdog?
    /// The disk thread and rings of the session's streamed players.
    let streaming = SessionStreaming()

    /// Called when the server goes away or throws the client out, or JACK stops running the
    /// client for `stallTimeout` seconds while its server runs on (players stop, reporting
    /// `successfully: false`). On the event thread.
    public var onInterruptionBegan: (() -> Void)? {
        get { lock.withLock { interruptionBeganHandler } }
        set { lock.withLock { interruptionBeganHandler = newValue } }
    }
    /// Called when a server is reached again (with `reconnect`); the device clock starts afresh.
    public var onInterruptionEnded: (() -> Void)? {
        get { lock.withLock { interruptionEndedHandler } }
        set { lock.withLock { interruptionEndedHandler = newValue } }
    }
    /// Called for every connection made or broken on the server, by anyone.
    public var onRouteChange: ((RouteChange) -> Void)? {
        get { lock.withLock { routeChangeHandler } }
        set { lock.withLock { routeChangeHandler = newValue } }
    }
    private var interruptionBeganHandler: (() -> Void)?
    private var interruptionEndedHandler: (() -> Void)?
    private var routeChangeHandler: ((RouteChange) -> Void)?
    /// True between an interruption and its end.
    public var isInterrupted: Bool { lock.withLock { interrupted } }
    fileprivate var interrupted = false

    /// Opens the JACK client, activates it and makes the output connections.
    public convenience init(configuration: Configuration = .init()) throws {
        try self.init(configuration: configuration, manualDevice: nil)
    }

    /// A session on `device`, which renders when told to (see `ManualDevice`); the
    /// configuration's server name and connections do not apply.
    public convenience init(configuration: Configuration = .init(), device: ManualDevice) throws {
        try self.init(configuration: configuration, manualDevice: device)
    }

    private init(configuration: Configuration, manualDevice: ManualDevice?) throws {
        for name in configuration.outputs {
            if let problem = Engine.outputNameProblem(name) { throw SamplerKitError.session("outputs: \(problem)") }
        }
        if Set(configuration.outputs).count != configuration.outputs.count {
            throw SamplerKitError.session("outputs: a name appears twice")
        }
        if configuration.outputs.count >= Engine.maxOutputCount {
            throw SamplerKitError.session("outputs: at most \(Engine.maxOutputCount - 1) besides the main mix")
        }
        self.configuration = configuration
        self.manualDevice = manualDevice
        engine = Engine(configuration: .init(maxPlayers: configuration.maxPlayers, maxSounds: max(1, configuration.maxSounds)))
        freePlayers = Array((0..<configuration.maxPlayers).reversed())
        let (c, ports) = try connect()
        device = c
        wantedConnections = ports
        // The thread holds the session only for the length of one tick, so a session the
        // program drops without `close()` is deinitialized (and closes its client).
        let finished = self.finished
        let thread = Thread { [weak self] in
            while AudioSession.tick(self) { usleep(2_000) }  // it polls the lock-free event queue
            finished.signal()
        }
        thread.name = "sampler.session.events"
        eventThread = thread
        thread.start()
    }

    deinit { close() }

    /// Opens and activates a client, makes the output connections and waits (up to 5 s) for its
    /// first period (a manual device is attached, and renders when told to). Called without the
    /// session lock (it waits); the caller installs the device.
    private func connect() throws -> (AudioDevice, [String]) {
        if let manualDevice {
            try manualDevice.attach(engine)
            return (manualDevice, [])
        }
        let c = try JACKClient(name: configuration.name, serverName: configuration.serverName, engine: engine,
                               outputs: configuration.outputs)
        let periodsBefore = engine.periodCount
        try c.activate()
        let ports: [String]
        if let wanted = configuration.connections {
            ports = wanted
        } else {
            ports = Array(c.physicalPlaybackPorts().prefix(2))
        }
        if !ports.isEmpty { try c.connectOutputs(to: ports) }
        // The device clock runs once the first period has been rendered.
        let deadline = Date().addingTimeInterval(5)
        while engine.periodCount <= periodsBefore {
            if Date() > deadline || c.isShutDown { break }
            usleep(1_000)
        }
        return (c, ports)
    }

    /// Routes `player` to the session's output `name` (nil: the main mix) from the earliest
    /// frame possible, for what it plays now and later; a sound it restarts over fades out where
    /// it was. Throws for a name the session was not configured with. Any thread.
    func route(player: Int, to name: String?) throws(SamplerKitError) {
        var index = 0
        if let name {
            guard let k = configuration.outputs.firstIndex(of: name) else {
                let have = configuration.outputs.isEmpty ? "it has none" : "it has \(configuration.outputs.joined(separator: ", "))"
                throw .session("no output \"\(name)\" in the session's configuration (\(have))")
            }
            index = k + 1
        }
        lock.withLock {
            playerOutputs[player] = name
            held.send(.setOutput(player: player, index, at: held.earliestStartFrame))
        }
    }

    /// The named output `player` is routed to (nil: the main mix). Any thread.
    func output(ofPlayer player: Int) -> String? { lock.withLock { playerOutputs[player] } }

    /// Stops the event thread and closes the client. Idempotent.
    ///
    /// Safe from any thread, including from a callback the session is running (a delegate, a
    /// completion handler, `onInterruption…`) and from the session's deinit: the event thread is
    /// waited for only from other threads.
    public func close() {
        guard running.exchange(false, ordering: .acquiringAndReleasing) else { return }
        if let eventThread, Thread.current !== eventThread { finished.wait() }
        lock.lock()
        device?.close()
        device = nil
        streaming.stop()
        lock.unlock()
    }

    // MARK: Time

    /// Frames per second of the device clock.
    public var sampleRate: Double { lock.withLock { held.sampleRate } }
    /// Frames per JACK period.
    public var bufferSize: Int { lock.withLock { held.bufferSize } }

    /// The device clock now, in frames (AVAudioPlayer's `deviceCurrentTime`, in frames).
    public var deviceCurrentFrame: Frame { lock.withLock { held.deviceCurrentFrame } }
    /// The device clock now, in seconds.
    public var deviceCurrentTime: Double {
        let rate = sampleRate
        return rate > 0 ? Double(deviceCurrentFrame) / rate : 0
    }

    /// The earliest frame a command sent now is sure to reach before its period begins.
    public var earliestStartFrame: Frame { lock.withLock { held.earliestStartFrame } }

    /// The frame `time` stands for: its sample time, else its host time converted, else (neither
    /// valid) the earliest start frame.
    public func frame(for time: AudioTime?) -> Frame { lock.withLock { held.frame(for: time) } }

    /// The host time (microseconds on JACK's clock) of device frame `frame`.
    public func hostTime(forFrame frame: Frame) -> UInt64 { lock.withLock { device?.hostTime(atFrame: frame) ?? 0 } }

    /// JACK's clock now, in microseconds.
    public var hostTimeNow: UInt64 { lock.withLock { device?.hostTimeNow ?? 0 } }

    /// The output ports' playback latency in frames (the largest of JACK's range).
    public var outputLatencyFrames: Int { lock.withLock { held.outputLatencyFrames } }

    /// The device time of the last rendered period's first frame.
    public var lastRenderTime: AudioTime { lock.withLock { held.lastRenderTime } }

    /// Audio the device did not let the engine play, since the session opened: cycles JACK
    /// skipped (each a silent gap, the music advanced over it), frames asked for again (written
    /// as silence), starts heard late, and JACK's own xrun count. Any thread.
    public var lostAudio: LostAudio {
        LostAudio(lostPeriods: engine.lostPeriodCount, lostFrames: engine.lostFrameCount,
                  repeatedFrames: engine.repeatedFrameCount, lateStarts: engine.lateStartCount,
                  xruns: lock.withLock { device?.xrunCount ?? 0 }, lateCommands: engine.lateCommandCount)
    }

    // MARK: Members

    func allocatePlayer(for member: SessionMember) throws -> Int {
        try lock.withLock {
            doDeferredWork()
            guard let p = freePlayers.popLast() else {
                throw SamplerError("the session has no free player (it holds \(configuration.maxPlayers); raise maxPlayers)")
            }
            members[p] = WeakMember(value: member)
            return p
        }
    }

    /// `count` consecutive player slots for `member`, which holds the session's instruments (their
    /// voices): the first of them. Throws when another member holds the instruments, or no run
    /// of `count` slots is free.
    func allocateInstrumentPlayers(_ count: Int, for member: SessionMember) throws -> Int {
        try lock.withLock {
            doDeferredWork()
            if instrumentHolder != nil {
                throw SamplerError("the session already has a SamplerNode (an engine plays one set of instruments; load one kit)")
            }
            let free = Set(freePlayers)
            var first = 0
            var found: Int?
            while first + count <= configuration.maxPlayers {
                if let taken = (first..<(first + count)).first(where: { !free.contains($0) }) {
                    first = taken + 1
                } else {
                    found = first
                    break
                }
            }
            guard let first = found else {
                throw SamplerError("the session has no \(count) free players in a row for the kit's voices (it holds \(configuration.maxPlayers); raise maxPlayers)")
            }
            freePlayers.removeAll { $0 >= first && $0 < first + count }
            for p in first..<(first + count) { members[p] = WeakMember(value: member) }
            instrumentHolder = ObjectIdentifier(member)
            return first
        }
    }

    /// Gives slot `p` back, then runs `work` (giving back what its owner held), both with the
    /// lock held. For a member's deinit, which may run with the lock already held (when the last
    /// reference to a member is dropped under it, e.g. an array of members built under the lock):
    /// so the work is queued, not done here, and is done the next time the event thread or
    /// `allocatePlayer` holds the lock (within a tick of the event thread, 2 ms).
    func releasePlayer(_ p: Int, then work: ((Held) -> Void)? = nil) {
        deferred.withLock { $0.append { held in
            held.releaseSlot(p)
            work?(held)
        } }
    }

    /// Queues `work` for the next time the event thread (or an allocation) holds the lock: for a
    /// deinit, as `releasePlayer`.
    func deferWork(_ work: @escaping (Held) -> Void) {
        deferred.withLock { $0.append(work) }
    }

    /// Does the work deinits queued. Lock held.
    private func doDeferredWork() {
        let work = deferred.withLock { queued in
            defer { queued = [] }
            return queued
        }
        for w in work { w(held) }
    }

    /// Sends `command` to the render thread; false when the queue is full or the command was
    /// refused.
    @discardableResult
    func send(_ command: Command) -> Bool { lock.withLock { held.send(command) } }

    func register(_ sound: Sound, continuation: SoundID? = nil) throws -> SoundID {
        try lock.withLock { try held.register(sound, continuation: continuation) }
    }

    /// Withdraws one registration of a sound (see `Engine.unregister`).
    func unregister(_ id: SoundID) { lock.withLock { held.unregister(id) } }

    /// The session's calls for code that holds its lock: the same as the public ones, without
    /// taking the lock. Only valid while the lock is held (a member's operation inside
    /// `session.lock.withLock`, or a `SessionMember` method).
    struct Held {
        let session: AudioSession

        var engine: Engine { session.engine }
        var streaming: SessionStreaming { session.streaming }
        var sampleRate: Double { session.device?.sampleRate ?? 0 }
        var bufferSize: Int { session.device?.bufferSize ?? 0 }
        var deviceCurrentFrame: Frame { session.device?.currentFrame() ?? session.engine.renderedFrame }
        var earliestStartFrame: Frame { session.engine.renderedFrame + Frame(max(bufferSize, 1)) }
        var outputLatencyFrames: Int { session.device?.outputLatencyFrames ?? 0 }
        var lastRenderTime: AudioTime { AudioTime(sampleTime: session.engine.lastPeriodStart, atRate: sampleRate) }
        var isInterrupted: Bool { session.interrupted }

        func frame(for time: AudioTime?) -> Frame {
            guard let time else { return earliestStartFrame }
            if let s = time.sampleTime { return s }
            if let h = time.hostTime { return session.device?.frame(atHostTime: h) ?? earliestStartFrame }
            return earliestStartFrame
        }

        @discardableResult
        func send(_ command: Command) -> Bool { session.engine.send(command) }

        func register(_ sound: Sound, continuation: SoundID? = nil) throws -> SoundID {
            try session.engine.register(sound, continuation: continuation)
        }

        func unregister(_ id: SoundID) { session.engine.unregister(id) }

        /// A start tag no other start of this session has had (nor will for 2^32 − 1 starts): a
        /// slot's new owner never takes its previous owner's events for its own. 0 is never issued.
        func newTag() -> UInt32 {
            session.lastTag &+= 1
            if session.lastTag == 0 { session.lastTag = 1 }
            return session.lastTag
        }

        func replaceMember(_ p: Int, with member: SessionMember) {
            session.members[p] = WeakMember(value: member)
        }

        /// The instruments are no longer held (their holder swapped its own out).
        func releaseInstruments() { session.instrumentHolder = nil }

        /// Frees slot `p`: nothing its old owner queued may play on its next owner.
        func releaseSlot(_ p: Int) {
            session.members[p] = nil
            send(Command.cancelPending(player: p))
            send(.stop(player: p))
            // The next owner of the slot starts on the main mix: after any routing the last
            // owner sent (a routing is never cancelled; theirs are at earlier or equal frames).
            session.playerOutputs[p] = nil
            send(.setOutput(player: p, 0, at: earliestStartFrame))
            session.freePlayers.append(p)
        }

        /// Lowers every player while a ducking player plays, and restores them after.
        func updateDucking() {
            let players = session.liveMembers.compactMap { $0 as? AudioPlayer }
            let duckers = players.filter(\.isDucking)
            let rate = session.device?.sampleRate ?? 48000
            for player in players where !player.isDucking {
                var gain: Float = 1
                var fade = 0.0
                for d in duckers {
                    guard let duck = d.heldDucking else { continue }
                    gain = min(gain, Gain(decibels: -abs(duck.decibels)).linear)
                    fade = max(fade, duck.fadeDuration)
                }
                if duckers.isEmpty {
                    fade = players.compactMap { $0.heldDucking?.fadeDuration }.max() ?? 0
                }
                player.setDuck(gain, fadeFrames: Int(fade * rate))
            }
        }

        /// Sleeps with the session lock released, so the event thread (callbacks) and other
        /// players go on while a player waits for the disk or for a frame. The caller's own
        /// `operations` lock keeps its operation from interleaving with another of its own.
        func sleepUnlocked(microseconds: UInt32) {
            session.lock.unlock()
            usleep(microseconds)
            session.lock.lock()
        }
    }

    // MARK: Event thread

    /// One tick of the event thread; false once the session is closed or gone. The callbacks
    /// collected under the lock run after it is released.
    private static func tick(_ session: AudioSession?) -> Bool {
        guard let session, session.running.load(ordering: .acquiring) else { return false }
        if session.eventsHeld.load(ordering: .acquiring) { return true }
        let callbacks = session.collectCallbacks()
        for callback in callbacks { callback() }
        return true
    }

    private func collectCallbacks() -> [() -> Void] {
        do {
            var callbacks: [() -> Void] = []
            lock.lock()
            doDeferredWork()
            engine.drainEvents { event in
                if let member = members[Int(event.player)]?.value { callbacks += member.handle(event, session: self) }
            }
            for member in liveMembers { callbacks += member.tick(session: self) }
            if let c = device {
                for change in c.takeRouteChanges() {
                    if let handler = routeChangeHandler { callbacks.append { handler(change) } }
                }
                // Wanted connections are made again when their ports come back. A port that has
                // just been registered may not accept a connection yet: keep trying (every 50 ms)
                // while any wanted connection is missing.
                if !c.takeRegisteredPorts().isEmpty { lastConnectionCheck = .distantPast }
                if !wantedConnections.isEmpty && Date().timeIntervalSince(lastConnectionCheck) > 0.05 {
                    lastConnectionCheck = Date()
                    let outputs = c.outputPortNames
                    let missing = wantedConnections.prefix(2).enumerated().contains { i, port in !c.isConnected(outputs[i], to: port) }
                    if missing { try? c.connectOutputs(to: wantedConnections) }
                }
                var stalled = false
                let timeout = configuration.stallTimeout
                if !interrupted, timeout > 0, timeout.isFinite, let frame = c.cycleFrame {
                    if watchdog == nil { watchdog = ProcessWatchdog(limit: timeout, sampleRate: c.sampleRate) }
                    let stall = watchdog?.check(periods: engine.periodCount, serverFrame: frame,
                                                now: ProcessInfo.processInfo.systemUptime)
                    stalled = stall?.serverRan == true
                }
                if (c.isShutDown || stalled) && !interrupted {
                    interrupted = true
                    for member in liveMembers { callbacks += member.interruptionBegan(session: self) }
                    if let handler = interruptionBeganHandler { callbacks.append(handler) }
                    c.close()
                    device = nil
                    watchdog = nil
                }
            }
            let reconnecting = interrupted && configuration.reconnect
                && Date().timeIntervalSince(lastReconnectAttempt) > configuration.reconnectInterval
            if reconnecting {
                lastReconnectAttempt = Date()
                // A fresh device clock: nothing scheduled on the old one may fire, and a timed
                // command made on it (while the server was away) is dropped when it arrives.
                engine.beginNewClock()
            }
            lock.unlock()
            // Opening a client waits for the server (and for its first period): not under the
            // lock, so other threads' calls go on meanwhile (they see the session interrupted).
            if reconnecting, let (c, ports) = try? connect() {
                lock.lock()
                if running.load(ordering: .acquiring) {
                    // Commands made while the client was opening carry the old clock's frames.
                    engine.beginNewClock()
                    device = c
                    wantedConnections = ports
                    interrupted = false
                    for member in liveMembers { callbacks += member.interruptionEnded(session: self) }
                    if let handler = interruptionEndedHandler { callbacks.append(handler) }
                } else {
                    c.close()  // closed meanwhile
                }
                lock.unlock()
            }
            return callbacks
        }
    }
}
