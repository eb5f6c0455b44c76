import CJACK
import LockFree
import SamplerCore
import Synchronization

/// JACK's transport state.
package enum TransportState: UInt8, Sendable, BitwiseCopyable {
    case stopped, rolling, starting, other
}

/// What the transport client saw in one process cycle (or one sync request), stamped with the
/// cycle's device frame. Plain data.
package struct TransportSnapshot: Equatable, Sendable, BitwiseCopyable {
    package enum Kind: UInt8, Sendable, BitwiseCopyable {
        /// A cycle whose state or position differs from what the previous one predicted.
        case change
        /// The transport asks slow-sync clients whether they are ready to roll from `frame`.
        case syncRequest
    }

    package var kind: Kind
    /// The device-clock frame of the cycle's first sample.
    package var deviceFrame: Frame
    package var state: TransportState
    /// The transport position (frames) at the cycle's first sample.
    package var frame: Int64
    /// True when a timebase master supplies bar/beat/tick.
    package var hasBBT: Bool
    package var bar: Int32 = 0
    package var beat: Int32 = 0
    /// Ticks into the beat (the master's double-resolution tick when it gives one).
    package var tick: Double = 0
    package var ticksPerBeat: Double = 0
    /// JACK's tempo: beats of `beatType` per minute.
    package var beatsPerMinute: Double = 0
    package var beatsPerBar: Float = 0
    package var beatType: Float = 0
    /// How many frames before the cycle start the BBT fields refer to.
    package var bbtOffset: Int64 = 0
    package var periodSize: Int

    init(kind: Kind, deviceFrame: Frame, state: jack_transport_state_t, position p: jack_position_t, periodSize: Int) {
        self.kind = kind
        self.deviceFrame = deviceFrame
        self.state = TransportSnapshot.state(state)
        frame = Int64(p.frame)
        hasBBT = p.valid.rawValue & JackPositionBBT.rawValue != 0
        self.periodSize = periodSize
        if hasBBT {
            bar = p.bar
            beat = p.beat
            tick = p.valid.rawValue & JackTickDouble.rawValue != 0 ? p.tick_double : Double(p.tick)
            ticksPerBeat = p.ticks_per_beat
            beatsPerMinute = p.beats_per_minute
            beatsPerBar = p.beats_per_bar
            beatType = p.beat_type
            bbtOffset = p.valid.rawValue & JackBBTFrameOffset.rawValue != 0 ? Int64(p.bbt_offset) : 0
        }
    }

    static func state(_ s: jack_transport_state_t) -> TransportState {
        switch s {
        case JackTransportStopped: .stopped
        case JackTransportRolling: .rolling
        case JackTransportStarting, JackTransportNetStarting: .starting
        default: .other
        }
    }

    /// Same bar, beat, tick, tempo and meter (or both without a timebase master).
    package func sameBBT(as o: TransportSnapshot) -> Bool {
        hasBBT == o.hasBBT && bar == o.bar && beat == o.beat && tick == o.tick && beatsPerMinute == o.beatsPerMinute
            && beatsPerBar == o.beatsPerBar && beatType == o.beatType && bbtOffset == o.bbtOffset
    }

    /// True when the musical meaning differs (tempo, meter, master present or not).
    func bbtDiffers(from o: TransportSnapshot) -> Bool {
        hasBBT != o.hasBBT || beatsPerMinute != o.beatsPerMinute || beatsPerBar != o.beatsPerBar || beatType != o.beatType
    }
}

/// A port-less JACK client that follows (and, as timebase master, drives) the JACK transport for
/// a metronome.
///
/// Its process callback queries the transport every cycle and reports, through a lock-free ring,
/// each cycle whose state or position breaks from the previous one (start, stop, relocation,
/// tempo change), stamped with the device frame. As a slow-sync client it holds a transport
/// start until the control side has scheduled the first clicks: `arm` names the cycle in which
/// to say "ready", so the transport rolls on a frame known in advance. As timebase master
/// it answers bar/beat/tick from a `TimebaseTable`.
///
/// Control thread only (all members); the callbacks run on JACK's real-time thread and only do
/// JACK's RT-safe queries, arithmetic and atomic/ring operations.
///
/// `@unchecked Sendable` by contract: its only mutable state, `client`, is used by one control
/// thread at a time; the callbacks reach only the `TransportContext`.
package final class TransportClient: @unchecked Sendable {
    /// The name JACK gave the client.
    package let name: String
    private var client: OpaquePointer?
    private let context: TransportContext
    private let unmanaged: Unmanaged<TransportContext>

    /// Opens the client (not yet active).
    /// - Parameters:
    ///   - engine: when given, device frames are widened on the engine's clock (the one its
    ///     commands use); otherwise JACK's 32-bit frame time is widened from its first value.
    ///   - slowSync: register as a slow-sync client (see `arm`).
    ///   - timebase: become timebase master and answer positions from this table.
    package init(name: String, serverName: String? = nil, engine: Engine? = nil, slowSync: Bool = false,
                timebase: TimebaseTable? = nil) throws(JACKError) {
        var status = jack_status_t(0)
        let opened: OpaquePointer? = name.withCString { cname in
            if let serverName { return serverName.withCString { sampler_jack_client_open(cname, $0, 1, &status) } }
            return sampler_jack_client_open(cname, nil, 1, &status)
        }
        guard let opened else {
            if status.rawValue & JackServerFailed.rawValue != 0 { throw .serverNotRunning(server: serverName) }
            throw .clientOpenFailed(status: status.rawValue)
        }
        client = opened
        self.name = String(cString: jack_get_client_name(opened))
        context = TransportContext(client: opened, engine: engine, timebase: timebase)
        unmanaged = Unmanaged.passRetained(context)
        let arg = unmanaged.toOpaque()
        jack_set_process_callback(opened, transportProcessCallback, arg)
        if slowSync { jack_set_sync_callback(opened, transportSyncCallback, arg) }
        if timebase != nil {
            guard jack_set_timebase_callback(opened, 0, transportTimebaseCallback, arg) == 0 else {
                jack_client_close(opened)
                client = nil
                // Every stored property is set, so deinit runs and releases the context: releasing
                // it here as well would free it twice.
                throw .clientOpenFailed(status: 0)
            }
        }
    }

    deinit {
        close()
        unmanaged.release()
    }

    package func activate() throws(JACKError) {
        guard let client, jack_activate(client) == 0 else { throw .activationFailed }
    }

    package var sampleRate: Double { client.map { Double(jack_get_sample_rate($0)) } ?? 0 }
    package var bufferSize: Int { client.map { Int(jack_get_buffer_size($0)) } ?? 0 }
    /// Cycles the process callback has run.
    package var cycleCount: Int { context.cycles.load(ordering: .acquiring) }

    /// Calls `body` with every report since the last call, oldest first.
    package func poll(_ body: (TransportSnapshot) -> Void) {
        while let s = context.reports.pop() { body(s) }
    }

    /// Answers the pending sync request for transport frame `frame` with "ready" in the cycle
    /// that starts on device frame `cycle` (or the first cycle after it), so that the transport
    /// rolls from the cycle after that one.
    package func arm(frame: Int64, readyInCycle cycle: Frame) {
        context.armedFrame.store(frame, ordering: .relaxed)
        context.armedCycle.store(cycle, ordering: .releasing)
    }

    /// The transport now, as JACK reports it outside the process cycle.
    package func query() -> TransportSnapshot? {
        guard let client else { return nil }
        var pos = jack_position_t()
        let state = jack_transport_query(client, &pos)
        return TransportSnapshot(kind: .change, deviceFrame: Frame(jack_frame_time(client)), state: state, position: pos,
                                 periodSize: bufferSize)
    }

    /// Starts the transport rolling (from where it is).
    package func start() { if let client { jack_transport_start(client) } }
    /// Stops the transport.
    package func stop() { if let client { jack_transport_stop(client) } }
    /// Moves the transport to `frame`.
    package func locate(_ frame: UInt32) { if let client { _ = jack_transport_locate(client, frame) } }

    /// Deactivates and closes the client (giving up the timebase). Idempotent.
    package func close() {
        guard let c = client else { return }
        client = nil
        if context.timebase != nil { jack_release_timebase(c) }
        jack_deactivate(c)
        jack_client_close(c)
    }
}

/// What the transport callbacks reach through their `void *`.
///
/// `@unchecked Sendable` by contract: the `let`s are fixed in `init`; `last`, `lastRequest` and the
/// clock fields are touched only on JACK's process thread (the process, sync and timebase callbacks
/// all run there); `reports` is SPSC (process thread pushes, `poll` pops on the control thread);
/// `cycles`, `armedFrame` and `armedCycle` are atomics.
final class TransportContext: @unchecked Sendable {
    let client: OpaquePointer
    let engine: Engine?
    let timebase: TimebaseTable?
    let reports = SPSCRing<TransportSnapshot>(capacity: 1024)
    let cycles = Atomic<Int>(0)
    /// Sync readiness: the transport frame and the device frame of the cycle to say "ready" in.
    let armedFrame = Atomic<Int64>(-1)
    let armedCycle = Atomic<Int64>(.max)

    // Process thread only.
    private var last: TransportSnapshot?
    private var lastRequest: TransportSnapshot?
    private var clockBase: Int64 = 0
    private var lastRaw: UInt32 = 0
    private var clockStarted = false

    init(client: OpaquePointer, engine: Engine?, timebase: TimebaseTable?) {
        self.client = client
        self.engine = engine
        self.timebase = timebase
    }

    /// The device frame of this cycle, on the engine's clock when there is one.
    private func cycleFrame() -> Frame {
        var raw = jack_last_frame_time(client)
        if let engine, engine.periodCount > 0 {
            raw &+= UInt32(truncatingIfNeeded: engine.clockAdvance.load(ordering: .relaxed))
            let near = engine.lastPeriodStart
            return near + Frame(Int32(bitPattern: raw &- UInt32(truncatingIfNeeded: near)))
        }
        if clockStarted { clockBase &+= Int64(raw &- lastRaw) } else { clockBase = Int64(raw); clockStarted = true }
        lastRaw = raw
        return clockBase
    }

    /// A report that does not fit in the ring (the control side fell behind) is dropped.
    private func report(_ s: TransportSnapshot) {
        _ = reports.push(s)
    }

    func process(frames: UInt32) -> Int32 {
        var pos = jack_position_t()
        let state = jack_transport_query(client, &pos)
        let now = TransportSnapshot(kind: .change, deviceFrame: cycleFrame(), state: state, position: pos, periodSize: Int(frames))
        var changed = true
        if let last {
            let advance = last.state == .rolling ? Int64(last.periodSize) : 0
            changed = now.state != last.state || now.frame != last.frame + advance || now.bbtDiffers(from: last)
        }
        if changed { report(now) }
        last = now
        cycles.add(1, ordering: .releasing)
        return 0
    }

    func sync(state: jack_transport_state_t, position: UnsafeMutablePointer<jack_position_t>) -> Int32 {
        guard TransportSnapshot.state(state) == .starting else { return 1 }
        let frame = Int64(position.pointee.frame)
        let cycle = cycleFrame()
        let request = TransportSnapshot(kind: .syncRequest, deviceFrame: cycle, state: state, position: position.pointee,
                                        periodSize: Int(jack_get_buffer_size(client)))
        // A new position, or the timebase master's bar/beat/tick for it arriving: report it.
        if lastRequest.map({ $0.frame != frame || !$0.sameBBT(as: request) }) ?? true {
            lastRequest = request
            report(request)
        }
        let armedCycle = armedCycle.load(ordering: .acquiring)
        return armedFrame.load(ordering: .relaxed) == frame && cycle >= armedCycle ? 1 : 0
    }

    func fillPosition(_ position: UnsafeMutablePointer<jack_position_t>) {
        timebase?.fill(position)
    }
}

// The C callbacks recover the context without retaining it (the client owns it).
let transportProcessCallback: JackProcessCallback = { frames, arg in
    Unmanaged<TransportContext>.fromOpaque(arg!)._withUnsafeGuaranteedRef { $0.process(frames: frames) }
}

let transportSyncCallback: JackSyncCallback = { state, position, arg in
    Unmanaged<TransportContext>.fromOpaque(arg!)._withUnsafeGuaranteedRef { $0.sync(state: state, position: position!) }
}

let transportTimebaseCallback: JackTimebaseCallback = { _, _, position, _, arg in
    Unmanaged<TransportContext>.fromOpaque(arg!)._withUnsafeGuaranteedRef { $0.fillPosition(position!) }
}
