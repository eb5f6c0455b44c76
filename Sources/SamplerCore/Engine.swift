import LockFree
import RealModule
import Synchronization

/// The mixing engine: players, their voices, the sounds they play and the queues to and from the
/// render thread. It knows nothing of JACK or files: a backend (JACK, or the offline renderer)
/// calls `render` once per period with the absolute device frame of the period's first sample.
///
/// Threads: `render` runs on the render (real-time) thread. Everything else is control-thread
/// API; `send` and `drainEvents` each assume a single calling thread (wrap them in a lock if
/// several control threads share an engine).
///
/// `@unchecked Sendable` by contract: voices, tails, schedule, timeline and the scratch/MIDI buffers
/// are touched only by `render`; the private registration arrays by one control thread at a time;
/// commands and events cross in SPSC rings; counters, player states and meters are atomics; a `sounds`
/// slot is written before any command naming it is pushed, `instrumentTables` only before the first render.
public final class Engine: @unchecked Sendable {
    public let configuration: EngineConfiguration

    let commands: SPSCRing<Command>
    let events: SPSCRing<Event>
    let schedule: UnsafeCommandSchedule
    let voices: UnsafeMutablePointer<Voice>
    /// Per player, a voice fading out after a declicked restart.
    let tails: UnsafeMutablePointer<Voice>
    /// The voices and tails that are sounding (or need their status published): what `render` walks.
    let voiceList: UnsafeVoiceList
    /// Per player, its position and state as the render thread publishes them at the end of each
    /// period: `position << 2 | paused << 1 | active`, densely (8 players per cache line).
    let playerStates: UnsafeMutablePointer<Atomic<Int64>>
    /// Per player, its meters (see `PlayerMeterField`).
    let meters: UnsafeMutablePointer<Atomic<Int64>>
    /// Scratch memory for metered voices, `scratchCapacity` frames per channel.
    let scratchLeft: UnsafeMutablePointer<Float>
    let scratchRight: UnsafeMutablePointer<Float>
    let scratchCapacity = 1024
    /// The instruments (see `setInstruments`), behind a pointer the render thread reads.
    let instrumentTables: UnsafeMutablePointer<InstrumentTables>
    /// Tables for `replaceInstruments`: owned by the control thread except while
    /// `instrumentSwap` is `published` (then the render thread takes them on the command's frame
    /// and leaves the old ones here, `handedBack`).
    let pendingInstruments: UnsafeMutablePointer<InstrumentTables>
    let instrumentSwap = Atomic<Int>(InstrumentSwap.idle)
    let sounds: UnsafeMutablePointer<SoundSlot>
    /// Sounds kept alive while the engine can play them, by slot (nil: a free slot), with how
    /// many registrations each has. Control thread only.
    var registered: [Sound?] = []
    var registrations: [Int] = []
    /// Per slot, the continuation its sound holds a registration of (−1: none), withdrawn when
    /// the slot is released.
    var continuations: [Int32] = []
    var registeredStreams: [StreamRing] = []
    /// Slots whose last registration was withdrawn, each with the request sent for it (see
    /// `requestUnreferenced`): one is reused, and its sound released, only once the render
    /// thread has confirmed that no voice, tail, waiting command or instrument refers to it.
    var retired: [UnreferencedRequest] = []
    var freeSlots: [Int] = []
    /// The slot of each sound registered whole (no continuation), by the sound's identity: a
    /// second registration of it finds its slot at once, whatever the number of sounds.
    var plainSlots: [ObjectIdentifier: Int] = [:]
    /// `retired`'s count after the last reclaim: `unregister` reclaims again once it has doubled,
    /// so withdrawing n sounds costs O(n), not O(n²) (`drainEvents` reclaims every time).
    var retiredAtLastReclaim = 0
    /// Slots whose sound has a continuation, for the render thread's unreferenced check (which
    /// looks at continuations only when there are any).
    let continuationCount = Atomic<Int>(0)
    /// Frames the backend adds to its server's frame time to stamp periods (0 unless a netjack2
    /// slave's server restarted: `JACKClient.advanceClock`). Written by the control thread, read
    /// by the backend's threads.
    package let clockAdvance = Atomic<Int64>(0)
    /// Requests the command queue had no room for, sent again on the next call that can.
    var unsentRequests: [UnreferencedRequest] = []
    var lastRequestSequence: Int64 = 0
    /// The render thread's side of those requests (see `Engine+Ownership.swift`).
    let ownership: UnsafeOwnership

    let renderedFrameCounter = Atomic<Int64>(0)
    let periodStartCounter = Atomic<Int64>(0)
    let activeVoiceCounter = Atomic<Int>(0)
    let lateStartCounter = Atomic<Int>(0)
    let midiNoteCounter = Atomic<Int>(0)
    /// The frame the last MIDI Start (0xFA) received takes effect on, −1: none yet.
    let midiStartFrame = Atomic<Int64>(-1)
    let droppedCommandCounter = Atomic<Int>(0)
    let lostEventCounter = Atomic<Int>(0)
    let periodCounter = Atomic<Int>(0)
    let refusedCommandCounter = Atomic<Int>(0)
    let nonFiniteOutputCounter = Atomic<Int>(0)
    let lostPeriodCounter = Atomic<Int>(0)
    let expectedPeriodCounter = Atomic<Int>(0)
    let peakVoiceCounter = Atomic<Int>(0)
    let lostFrameCounter = Atomic<Int>(0)
    let repeatedFrameCounter = Atomic<Int>(0)
    let clockRestartCounter = Atomic<Int>(0)
    /// The render thread's timeline (see `render`).
    let timeline: UnsafeMutablePointer<TimelineState>
    /// Per MIDI note, the velocity of its last note-on from `midi_in` (a release trigger plays
    /// at it). Render thread only.
    let noteOnVelocities: UnsafeMutablePointer<UInt8>
    /// The MIDI channels' controllers (see `ControllerState`). Render thread only, after the
    /// first render.
    let controllers: ControllerState
    /// Per player, what controllers did to the voice it plays (see `VoiceControl`). Render
    /// thread only.
    let voiceControls: UnsafeMutablePointer<VoiceControl>
    /// Each voice's and each tail's filter (`filterState(of:)`), and the one the next `.start`
    /// gives its voice (`startVoice` sets it; a start without an instrument finds `.none`).
    let voiceFilters: UnsafeMutablePointer<FilterState>
    let tailFilters: UnsafeMutablePointer<FilterState>
    let nextFilter: UnsafeMutablePointer<FilterState>
    /// Per player, the attack (frames) of a voice whose envelope moves with its velocity, and of
    /// its tail: what it begins at the end of its envelope's delay.
    let voiceAttacks: UnsafeMutablePointer<Int32>
    let tailAttacks: UnsafeMutablePointer<Int32>
    /// Per player, whether the voice (and its tail) loops only until released
    /// (`InstrumentDefinition.loopsUntilRelease` of the instrument that started it).
    let voiceLoopsUntilRelease: UnsafeMutablePointer<Bool>
    let tailLoopsUntilRelease: UnsafeMutablePointer<Bool>
    let programChangeCounter = Atomic<Int>(0)
    /// The buffers that hold the tails of sounds streamed per voice (`attachTailBuffers`; none
    /// until then), what the render thread asks the filler to read into them, and per player
    /// the buffer its voice and its declick tail took (−1: none). Render thread, except where
    /// `Engine+Tails.swift` says.
    let tailBuffers: UnsafeMutablePointer<TailBuffers>
    let tailCursor: UnsafeMutablePointer<Int>
    let tailRequests: SPSCRing<TailRequest>
    let voiceTailBuffers: UnsafeMutablePointer<Int32>
    let tailTailBuffers: UnsafeMutablePointer<Int32>
    let tailUnderrunCounter = Atomic<Int>(0)
    let refusedTailCounter = Atomic<Int>(0)
    /// The buffers silent blocks (a catch-up, a late start moved on) are given as their output,
    /// `discardCapacity` frames per channel: a silent block moves its voices on in closed form
    /// and writes nothing to them.
    let discardLeft: UnsafeMutablePointer<Float>
    let discardRight: UnsafeMutablePointer<Float>
    let discardCapacity = 1024
    /// Outputs an engine renders at most: the main mix (output 0) and up to 63 more (an
    /// instrument's or a player's own stereo pair, `InstrumentDefinition.output`,
    /// `Command.setOutput`).
    /// (Computed: a stored static is initialized lazily, through a lock.)
    public static var maxOutputCount: Int {
        get { 64 }
    }
    /// Why `name` cannot name an output beside the main mix, or nil: 1 … 32 of A–Z, a–z, 0–9,
    /// `-`, `_`, `.`, not starting with `.` or `-`, and not `out` (the main mix's ports are
    /// `out_L`/`out_R`; an output's are `NAME_L`/`NAME_R`). Any thread.
    public static func outputNameProblem(_ name: String) -> String? {
        let allowed = name.utf8.allSatisfy { c in
            (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x5A) || (c >= 0x61 && c <= 0x7A) || c == 0x2D || c == 0x5F || c == 0x2E
        }
        if name.isEmpty || name.utf8.count > 32 || !allowed || name.hasPrefix(".") || name.hasPrefix("-") {
            return "an output name is 1 to 32 letters, digits, '-', '_' or '.' (not first), got \"\(name.prefix(40))\""
        }
        if name == "out" { return "\"out\" is the main mix's name (ports out_L/out_R): choose another output name" }
        return nil
    }
    /// `Engine.maxOutputCount`, for the render thread (a static is reached through metadata).
    let outputCapacity = 64
    /// The buses of the block being rendered (left, right of output 0, then of output 1, …),
    /// `2 × maxOutputCount` entries; and the catch-up's, output 0 on the discard buffers (never
    /// written). Render thread only.
    let blockBuses: UnsafeMutablePointer<UnsafeMutablePointer<Float>>
    let discardBuses: UnsafeMutablePointer<UnsafeMutablePointer<Float>>
    /// The MIDI messages of the period being rendered, in frame order, and how many there are
    /// (written by the render thread, read by the backend in the same callback).
    let midiOutput: UnsafeMutablePointer<MIDIMessage>
    let midiOutputCountStorage: UnsafeMutablePointer<Int>
    /// MIDI messages a period can hold; more in one period are dropped (counted late).
    public let midiOutputCapacity = 1024
    let sentMIDICounter = Atomic<Int>(0)
    let lateMIDICounter = Atomic<Int>(0)
    let deferredMIDICounter = Atomic<Int>(0)
    let lateCommandCounter = Atomic<Int>(0)
    let staleCommandCounter = Atomic<Int>(0)
    /// System messages (clock, start, stop, continue, song position) due in frames the device
    /// skipped, sent on the first frame after them; `[0]` of the count storage is how many.
    let deferredMIDI: UnsafeMutablePointer<MIDIMessage>
    let deferredMIDICountStorage: UnsafeMutablePointer<Int>
    /// `groupsRampedVoices`, where the render thread reads it.
    let rampGrouping = Atomic<Bool>(Engine.isWideVectorBuild)
    /// `usesWideVarispeed`, where the render thread reads it.
    let wideVarispeed = Atomic<Bool>(Engine.cpuHasAVX512)

    /// Makes an engine with every buffer it will ever need. Control thread only.
    public init(configuration: EngineConfiguration = .init()) {
        self.configuration = configuration
        commands = SPSCRing(capacity: configuration.commandCapacity)
        events = SPSCRing(capacity: configuration.eventCapacity)
        schedule = .allocate(capacity: configuration.scheduleCapacity)
        voices = Engine.allocateVoices(configuration.maxPlayers)
        tails = Engine.allocateVoices(configuration.maxPlayers)
        voiceList = .allocate(players: configuration.maxPlayers)
        playerStates = .allocate(capacity: configuration.maxPlayers)
        for i in 0..<configuration.maxPlayers { (playerStates + i).initialize(to: Atomic(0)) }
        let meterCount = configuration.maxPlayers * PlayerMeterField.stride
        meters = .allocate(capacity: meterCount)
        for i in 0..<meterCount { (meters + i).initialize(to: Atomic(0)) }
        instrumentTables = .allocate(capacity: 1)
        instrumentTables.initialize(to: .make([]))
        pendingInstruments = .allocate(capacity: 1)
        pendingInstruments.initialize(to: .make([]))
        // Every buffer the render thread uses is written once here, so that its pages are
        // resident before the render thread first touches them (no page fault in the callback).
        scratchLeft = .allocate(capacity: scratchCapacity)
        scratchLeft.initialize(repeating: 0, count: scratchCapacity)
        scratchRight = .allocate(capacity: scratchCapacity)
        scratchRight.initialize(repeating: 0, count: scratchCapacity)
        timeline = .allocate(capacity: 1)
        timeline.initialize(to: TimelineState())
        noteOnVelocities = .allocate(capacity: 128)
        noteOnVelocities.initialize(repeating: 64, count: 128)
        controllers = .allocate()
        voiceControls = .allocate(capacity: configuration.maxPlayers)
        voiceControls.initialize(repeating: VoiceControl(), count: configuration.maxPlayers)
        voiceFilters = .allocate(capacity: configuration.maxPlayers)
        voiceFilters.initialize(repeating: FilterState(), count: configuration.maxPlayers)
        tailFilters = .allocate(capacity: configuration.maxPlayers)
        tailFilters.initialize(repeating: FilterState(), count: configuration.maxPlayers)
        voiceAttacks = .allocate(capacity: configuration.maxPlayers)
        voiceAttacks.initialize(repeating: 0, count: configuration.maxPlayers)
        tailAttacks = .allocate(capacity: configuration.maxPlayers)
        tailAttacks.initialize(repeating: 0, count: configuration.maxPlayers)
        voiceLoopsUntilRelease = .allocate(capacity: configuration.maxPlayers)
        voiceLoopsUntilRelease.initialize(repeating: false, count: configuration.maxPlayers)
        tailLoopsUntilRelease = .allocate(capacity: configuration.maxPlayers)
        tailLoopsUntilRelease.initialize(repeating: false, count: configuration.maxPlayers)
        nextFilter = .allocate(capacity: 1)
        nextFilter.initialize(to: FilterState())
        tailBuffers = .allocate(capacity: 1)
        tailBuffers.initialize(to: TailBuffers())
        tailCursor = .allocate(capacity: 1)
        tailCursor.initialize(to: 0)
        tailRequests = SPSCRing(capacity: 1024)
        voiceTailBuffers = .allocate(capacity: configuration.maxPlayers)
        voiceTailBuffers.initialize(repeating: -1, count: configuration.maxPlayers)
        tailTailBuffers = .allocate(capacity: configuration.maxPlayers)
        tailTailBuffers.initialize(repeating: -1, count: configuration.maxPlayers)
        discardLeft = .allocate(capacity: discardCapacity)
        discardLeft.initialize(repeating: 0, count: discardCapacity)
        discardRight = .allocate(capacity: discardCapacity)
        discardRight.initialize(repeating: 0, count: discardCapacity)
        blockBuses = .allocate(capacity: 2 * outputCapacity)
        blockBuses.initialize(repeating: discardLeft, count: 2 * outputCapacity)
        discardBuses = .allocate(capacity: 2)
        discardBuses[0] = discardLeft
        discardBuses[1] = discardRight
        midiOutput = .allocate(capacity: midiOutputCapacity)
        midiOutput.initialize(repeating: MIDIMessage(frame: 0, bytes: 0, length: 0), count: midiOutputCapacity)
        midiOutputCountStorage = .allocate(capacity: 1)
        midiOutputCountStorage.initialize(to: 0)
        deferredMIDI = .allocate(capacity: midiOutputCapacity)
        deferredMIDI.initialize(repeating: MIDIMessage(frame: 0, bytes: 0, length: 0), count: midiOutputCapacity)
        deferredMIDICountStorage = .allocate(capacity: 1)
        deferredMIDICountStorage.initialize(to: 0)
        sounds = .allocate(capacity: configuration.maxSounds)
        registered.reserveCapacity(configuration.maxSounds)
        ownership = .allocate(slots: configuration.maxSounds)
    }

    deinit {
        UnsafeMutableRawPointer(voices).deallocate()
        UnsafeMutableRawPointer(tails).deallocate()
        voiceList.deallocate()
        playerStates.deinitialize(count: configuration.maxPlayers)
        playerStates.deallocate()
        meters.deinitialize(count: configuration.maxPlayers * PlayerMeterField.stride)
        meters.deallocate()
        scratchLeft.deallocate()
        scratchRight.deallocate()
        timeline.deallocate()
        discardLeft.deallocate()
        noteOnVelocities.deallocate()
        controllers.deallocate()
        voiceControls.deallocate()
        voiceFilters.deallocate()
        tailFilters.deallocate()
        nextFilter.deallocate()
        tailBuffers.pointee.deallocate()
        tailBuffers.deallocate()
        tailCursor.deallocate()
        voiceTailBuffers.deallocate()
        tailTailBuffers.deallocate()
        voiceAttacks.deallocate()
        tailAttacks.deallocate()
        voiceLoopsUntilRelease.deallocate()
        tailLoopsUntilRelease.deallocate()
        discardRight.deallocate()
        blockBuses.deallocate()
        discardBuses.deallocate()
        instrumentTables.pointee.deallocate()
        instrumentTables.deallocate()
        pendingInstruments.pointee.deallocate()
        pendingInstruments.deallocate()
        sounds.deallocate()
        schedule.deallocate()
        midiOutput.deallocate()
        midiOutputCountStorage.deallocate()
        deferredMIDI.deallocate()
        deferredMIDICountStorage.deallocate()
        ownership.deallocate()
    }

    /// Voices on whole cache lines (see `Voice`).
    private static func allocateVoices(_ count: Int) -> UnsafeMutablePointer<Voice> {
        let raw = UnsafeMutableRawPointer.allocate(byteCount: count * MemoryLayout<Voice>.stride, alignment: 64)
        let voices = raw.bindMemory(to: Voice.self, capacity: count)
        voices.initialize(repeating: Voice(), count: count)
        return voices
    }

    /// Queues `command` for the render thread; `false` (and the dropped count goes up) when the
    /// queue is full, and `false` (the refused count goes up) when a value in it is out of range
    /// (`Command.isValid`): a bad value never reaches the render thread. Control thread only, one
    /// thread at a time. Never blocks.
    @discardableResult
    public func send(_ command: Command) -> Bool {
        var command = command
        command.epoch = clockEpoch
        // A new clock's reset goes first: nothing of the new clock may reach the render thread
        // before it.
        if resetUnsent {
            guard pushReset() else {
                droppedCommandCounter.add(1, ordering: .relaxed)
                return false
            }
        }
        // A controller's `player` is its MIDI channel (checked by `isValid`), not a player.
        precondition(command.player >= 0 && Int(command.player) < configuration.maxPlayers || command.kind == .stopAll
                     || command.kind == .controller,
                     "player \(command.player) out of range")
        precondition(command.kind != .start || isRegistered(SoundID(rawValue: command.sound)),
                     "sound \(command.sound) is not registered")
        guard command.isValid else {
            refusedCommandCounter.add(1, ordering: .relaxed)
            return false
        }
        if commands.push(command) { return true }
        droppedCommandCounter.add(1, ordering: .relaxed)
        return false
    }

    /// The device clock commands are made on now: 0 at first, one more with each
    /// `beginNewClock`. Control thread only.
    public private(set) var clockEpoch: UInt32 = 0

    /// A new device clock (a server reconnected): every voice stops, everything scheduled is
    /// forgotten, the next period's stamp is taken as it is, and a timed command made on the old
    /// clock that reaches the render thread later is dropped and counted
    /// (`staleCommandCount`, `Event.staleCommand`). False when the command queue is full (the
    /// epoch has moved on all the same). Control thread only, as `send`.
    @discardableResult
    public func beginNewClock() -> Bool {
        clockEpoch &+= 1
        resetUnsent = true
        return pushReset()
    }

    /// Whether the reset of `beginNewClock` still waits for room in the command queue (`send`
    /// sends it first). Control thread only.
    var resetUnsent = false

    func pushReset() -> Bool {
        var reset = Command(kind: .reset, player: 0, frame: Command.immediately)
        reset.epoch = clockEpoch
        if commands.push(reset) { resetUnsent = false }
        return !resetUnsent
    }

    /// Timed commands dropped because they were made on an older device clock.
    public var staleCommandCount: Int { staleCommandCounter.load(ordering: .relaxed) }

    /// Calls `body` with every event the render thread reported since the last call, oldest
    /// first. Control thread only, one thread at a time.
    public func drainEvents(_ body: (Event) -> Void) {
        while let event = events.pop() { body(event) }
        reclaimRetiredSlots()
    }

    /// Where `player` is in its sound (frames) at the end of the last rendered period.
    public func position(ofPlayer player: Int) -> Frame {
        playerStates[player].load(ordering: .relaxed) >> 2
    }

    /// Whether `player` was sounding (started, not finished or stopped) at the end of the last
    /// period; a paused player counts as sounding.
    public func isActive(player: Int) -> Bool {
        playerStates[player].load(ordering: .relaxed) & 1 != 0
    }

    /// Whether `player` was paused at the end of the last period.
    public func isPaused(player: Int) -> Bool {
        playerStates[player].load(ordering: .relaxed) & 2 != 0
    }

    /// The meters of `player` accumulated since the previous call (or since metering was turned
    /// on), then starts a new accumulation. Metering must be on (`Command.setMetering`).
    /// Control thread only.
    public func takeMeters(ofPlayer player: Int) -> MeterReading {
        let base = player * PlayerMeterField.stride
        let frames = meters[base + PlayerMeterField.meterFrames].load(ordering: .acquiring)
        let reading = MeterReading(
            peakLeft: Float(bitPattern: UInt32(truncatingIfNeeded: meters[base + PlayerMeterField.peakLeft].load(ordering: .relaxed))),
            peakRight: Float(bitPattern: UInt32(truncatingIfNeeded: meters[base + PlayerMeterField.peakRight].load(ordering: .relaxed))),
            sumOfSquaresLeft: Double(bitPattern: UInt64(bitPattern: meters[base + PlayerMeterField.sumLeft].load(ordering: .relaxed))),
            sumOfSquaresRight: Double(bitPattern: UInt64(bitPattern: meters[base + PlayerMeterField.sumRight].load(ordering: .relaxed))),
            frames: frames)
        meters[base + PlayerMeterField.meterReset].add(1, ordering: .releasing)
        return reading
    }

    /// The device frame just after the last rendered period: nothing before it can still change.
    public var renderedFrame: Frame { renderedFrameCounter.load(ordering: .acquiring) }
    /// The device frame of the first sample of the last rendered period.
    public var lastPeriodStart: Frame { periodStartCounter.load(ordering: .acquiring) }
    /// Voices sounding at the end of the last period.
    public var activeVoiceCount: Int { activeVoiceCounter.load(ordering: .relaxed) }
    /// The most voices (declick tails among them) sounding at the end of a period so far.
    public var peakVoiceCount: Int { peakVoiceCounter.load(ordering: .relaxed) }
    /// Starts that played later than asked, since the engine was made.
    public var lateStartCount: Int { lateStartCounter.load(ordering: .relaxed) }
    /// MIDI note-ons received that name an instrument (queued to play).
    public var midiNoteCount: Int { midiNoteCounter.load(ordering: .relaxed) }
    /// The frame the last MIDI Start (0xFA, a system real-time message) handed to `receiveMIDI`
    /// takes effect on (its frame as given: one period after it arrived, as a note's), or nil
    /// before the first. Any thread.
    public var lastMIDIStartFrame: Frame? {
        let f = midiStartFrame.load(ordering: .acquiring)
        return f >= 0 ? f : nil
    }
    /// Commands dropped because a queue or the schedule was full.
    public var droppedCommandCount: Int { droppedCommandCounter.load(ordering: .relaxed) }
    /// Pauses and rate changes that arrived after their frame where the voice could not be put
    /// where it would have been (it wrapped, ended or was ramping meanwhile): applied where it is.
    public var lateCommandCount: Int { lateCommandCounter.load(ordering: .relaxed) }
    /// MIDI messages sent on their frames (`Command.Kind.midi`).
    public var sentMIDICount: Int { sentMIDICounter.load(ordering: .relaxed) }
    /// MIDI messages not sent: channel messages (notes) due in skipped frames or arrived after
    /// their frame, or more than a period holds.
    public var lateMIDICount: Int { lateMIDICounter.load(ordering: .relaxed) }
    /// System messages (MIDI clock ticks, start, stop, continue, song position) sent after their
    /// frame: due in frames the device skipped, sent on the first frame after them, or arrived
    /// late, sent at once, so that a follower counting ticks stays in step.
    public var deferredMIDICount: Int { deferredMIDICounter.load(ordering: .relaxed) }

    /// How many MIDI messages the period `render` just rendered sends. Render thread only: the
    /// backend reads them right after `render`, in the same callback.
    public var midiOutputCount: Int {
        @_noLocks @_noAllocation get { midiOutputCountStorage.pointee }
    }

    /// The `i`th MIDI message of the period just rendered (frame order). Render thread only.
    @_noLocks @_noAllocation
    public func midiOutput(at i: Int) -> MIDIMessage { midiOutput[i] }
    /// Output samples that came out non-finite and were written as 0 (none, unless something
    /// upstream let a NaN or an infinity through).
    public var nonFiniteOutputCount: Int { nonFiniteOutputCounter.load(ordering: .relaxed) }
    /// Commands `send` refused for a value out of range.
    public var refusedCommandCount: Int { refusedCommandCounter.load(ordering: .relaxed) }
    /// Events lost because the event queue was full.
    public var lostEventCount: Int { lostEventCounter.load(ordering: .relaxed) }
    /// Periods rendered since the engine was made.
    public var periodCount: Int { periodCounter.load(ordering: .acquiring) }
    /// The period the engine will render in, when its server says (JACK's buffer size); 0 when
    /// not known (offline, blocks are chosen by `longestBlockWithinHeads`). Tail rings are sized
    /// for it. Any thread.
    public var expectedPeriodFrames: Int {
        get { expectedPeriodCounter.load(ordering: .relaxed) }
        set { expectedPeriodCounter.store(max(0, newValue), ordering: .relaxed) }
    }
}

/// Why an engine call failed.
public enum EngineError: Error, Equatable, CustomStringConvertible {
    case tooManySounds(Int)
    /// The system refused `bytes` of memory (address space, or its overcommit limit).
    case outOfMemory(bytes: Int)

    public var description: String {
        switch self {
        case .tooManySounds(let n): "too many sounds at once (the engine was made with room for \(n))"
        case .outOfMemory(let bytes): "the system refused \(bytes >> 20) MB of memory for the engine's tail buffers"
        }
    }
}

/// Levels one player produced over a stretch of periods.
public struct MeterReading: Equatable, Sendable {
    public var peakLeft: Float
    public var peakRight: Float
    public var sumOfSquaresLeft: Double
    public var sumOfSquaresRight: Double
    public var frames: Int64

    /// Mean power of channel 0 or 1 in dBFS (-160 for silence, 0 for a full-scale square wave).
    public func averagePower(channel: Int) -> Double {
        let sum = channel == 0 ? sumOfSquaresLeft : sumOfSquaresRight
        guard frames > 0, sum > 0 else { return -160 }
        return max(-160, 10 * Double.log10(sum / Double(frames)))
    }

    /// Peak of channel 0 or 1 in dBFS (-160 for silence).
    public func peakPower(channel: Int) -> Double {
        let peak = Double(channel == 0 ? peakLeft : peakRight)
        guard peak > 0 else { return -160 }
        return max(-160, 20 * Double.log10(peak))
    }
}

/// Where each player's meters sit in `Engine.meters` (one block of `stride` atomics per player).
enum PlayerMeterField {
    // Computed, not stored: a stored static is initialized lazily, through a lock.
    static var stride: Int { @_noLocks @_noAllocation get { 8 } }
    static var peakLeft: Int { @_noLocks @_noAllocation get { 0 } }
    static var peakRight: Int { @_noLocks @_noAllocation get { 1 } }
    static var sumLeft: Int { @_noLocks @_noAllocation get { 2 } }
    static var sumRight: Int { @_noLocks @_noAllocation get { 3 } }
    static var meterFrames: Int { @_noLocks @_noAllocation get { 4 } }
    static var meterReset: Int { @_noLocks @_noAllocation get { 5 } }
}

/// Where `Engine.pendingInstruments` stands.
enum InstrumentSwap {
    /// The control thread's: free to fill.
    static var idle: Int { @_noLocks @_noAllocation get { 0 } }
    /// Filled and published: the render thread takes them on the command's frame.
    static var published: Int { @_noLocks @_noAllocation get { 1 } }
    /// Taken; the old tables are back in their place, the control thread's again.
    static var handedBack: Int { @_noLocks @_noAllocation get { 2 } }
}
