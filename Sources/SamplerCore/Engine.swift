import LockFree
import Synchronization

/// The mixing engine: players, their voices, the sounds they play and the queues to and from the
/// render thread. It knows nothing of JACK or files: a backend (JACK, or the offline renderer)
/// calls `render` once per period with the absolute device frame of the period's first sample.
///
/// Threads: `render` runs on the render (real-time) thread. Everything else is control-thread
/// API; `send` and `drainEvents` each assume a single calling thread (wrap them in a lock if
/// several control threads share an engine).
public final class Engine: @unchecked Sendable {
    public let configuration: EngineConfiguration

    let commands: SPSCRing<Command>
    let events: SPSCRing<Event>
    let schedule: UnsafeCommandSchedule
    let voices: UnsafeMutablePointer<Voice>
    let sounds: UnsafeMutablePointer<SoundSlot>
    /// Sounds kept alive while the engine can play them. Control thread only.
    private var registered: [Sound] = []

    let renderedFrameCounter = Atomic<Int64>(0)
    let periodStartCounter = Atomic<Int64>(0)
    let activeVoiceCounter = Atomic<Int>(0)
    let lateStartCounter = Atomic<Int>(0)
    let droppedCommandCounter = Atomic<Int>(0)
    let lostEventCounter = Atomic<Int>(0)
    let periodCounter = Atomic<Int>(0)

    /// Makes an engine with every buffer it will ever need. Control thread only.
    public init(configuration: EngineConfiguration = .init()) {
        self.configuration = configuration
        commands = SPSCRing(capacity: configuration.commandCapacity)
        events = SPSCRing(capacity: configuration.eventCapacity)
        schedule = .allocate(capacity: configuration.scheduleCapacity)
        voices = .allocate(capacity: configuration.maxPlayers)
        voices.initialize(repeating: Voice(), count: configuration.maxPlayers)
        sounds = .allocate(capacity: configuration.maxSounds)
        registered.reserveCapacity(configuration.maxSounds)
    }

    deinit {
        voices.deallocate()
        sounds.deallocate()
        schedule.deallocate()
    }

    /// Makes `sound` playable and returns its id. The engine keeps the sound alive for its own
    /// lifetime. Control thread only; safe while rendering (the slot is written before any command
    /// that names it is published).
    public func register(_ sound: Sound) throws(EngineError) -> SoundID {
        if let index = registered.firstIndex(where: { $0 === sound }) { return SoundID(rawValue: Int32(index)) }
        guard registered.count < configuration.maxSounds else { throw .tooManySounds(configuration.maxSounds) }
        let index = registered.count
        sounds[index] = SoundSlot(left: sound.left, right: sound.right,
                                  frames: Int64(sound.frameCount), isStereo: sound.channelCount == 2)
        registered.append(sound)
        return SoundID(rawValue: Int32(index))
    }

    /// The sound registered under `id`. Control thread only.
    public func sound(_ id: SoundID) -> Sound { registered[Int(id.rawValue)] }

    /// Queues `command` for the render thread; `false` (and the dropped count goes up) when the
    /// queue is full. Control thread only, one thread at a time. Never blocks.
    @discardableResult
    public func send(_ command: Command) -> Bool {
        precondition(command.player >= 0 && Int(command.player) < configuration.maxPlayers || command.kind == .stopAll,
                     "player \(command.player) out of range")
        precondition(command.kind != .start || (command.sound >= 0 && Int(command.sound) < registered.count),
                     "sound \(command.sound) is not registered")
        if commands.push(command) { return true }
        droppedCommandCounter.add(1, ordering: .relaxed)
        return false
    }

    /// Calls `body` with every event the render thread reported since the last call, oldest
    /// first. Control thread only, one thread at a time.
    public func drainEvents(_ body: (Event) -> Void) {
        while let event = events.pop() { body(event) }
    }

    /// The device frame just after the last rendered period: nothing before it can still change.
    public var renderedFrame: Frame { renderedFrameCounter.load(ordering: .acquiring) }
    /// The device frame of the first sample of the last rendered period.
    public var lastPeriodStart: Frame { periodStartCounter.load(ordering: .acquiring) }
    /// Voices sounding at the end of the last period.
    public var activeVoiceCount: Int { activeVoiceCounter.load(ordering: .relaxed) }
    /// Starts that played later than asked, since the engine was made.
    public var lateStartCount: Int { lateStartCounter.load(ordering: .relaxed) }
    /// Commands dropped because a queue or the schedule was full.
    public var droppedCommandCount: Int { droppedCommandCounter.load(ordering: .relaxed) }
    /// Events lost because the event queue was full.
    public var lostEventCount: Int { lostEventCounter.load(ordering: .relaxed) }
    /// Periods rendered since the engine was made.
    public var periodCount: Int { periodCounter.load(ordering: .acquiring) }
}

/// Why an engine call failed.
public enum EngineError: Error, Equatable, CustomStringConvertible {
    case tooManySounds(Int)

    public var description: String {
        switch self {
        case .tooManySounds(let n): "too many sounds (the engine holds at most \(n))"
        }
    }
}
