import CJACK
import SamplerCore
import Synchronization

/// What the JACK process callback needs, reachable from its `void *` argument without locks.
/// The clock fields are written by the process thread only.
///
/// `@unchecked Sendable` by contract: `client`, the ports and `recordTap` are written on the control
/// thread only before `jack_activate` (`client` is cleared after `jack_client_close`), so the process
/// thread only reads them; `clock` is the process thread's alone; `xruns` and `shutDown`, set
/// from JACK's other threads, are atomics.
final class ProcessContext: @unchecked Sendable {
    let engine: Engine
    var client: OpaquePointer?
    var leftPort: OpaquePointer?
    var rightPort: OpaquePointer?
    /// JACK MIDI input: note-ons trigger the engine's instruments.
    var midiInPort: OpaquePointer?
    /// JACK MIDI output (when asked for): the engine's MIDI messages, each on its frame.
    var midiOutPort: OpaquePointer?
    var recordTap: RecordTap?
    /// Outputs, the main mix's included (1: just `leftPort`/`rightPort`); the other outputs'
    /// ports, left and right of output k at `2k`, `2k + 1` (entries 0 and 1 unused); and the
    /// buffers of a period, in the same order, for the engine.
    let outputCount: Int
    let busPorts: UnsafeMutablePointer<OpaquePointer?>
    private let busBuffers: UnsafeMutablePointer<UnsafeMutablePointer<Float>>

    /// JACK's frame time of each period, widened to 64 bits.
    private var clock = DeviceClock()
    /// The host clock's cycles that JACK's frame time did not count (`CycleGaps`), in frames,
    /// summed until the control thread takes them.
    let uncountedFrames = Atomic<Int64>(0)
    private var gaps = CycleGaps()

    let xruns = Atomic<Int>(0)
    /// Periods whose render was still running when the server's next cycle began (its frame time
    /// had moved on by the callback's end): the server did not wait for them, so their output
    /// may not have been heard (a silent gap; the next period is on its own frames).
    let overrunPeriods = Atomic<Int>(0)
    /// MIDI messages JACK's output buffer had no room for (`jack_midi_event_write` failed).
    let unwrittenMIDI = Atomic<Int>(0)
    let shutDown = Atomic<Bool>(false)

    init(engine: Engine, outputCount: Int = 1) {
        self.engine = engine
        self.outputCount = max(1, outputCount)
        busPorts = .allocate(capacity: 2 * self.outputCount)
        busPorts.initialize(repeating: nil, count: 2 * self.outputCount)
        busBuffers = .allocate(capacity: 2 * self.outputCount)
        let placeholder = UnsafeMutablePointer<Float>(bitPattern: 64)!
        busBuffers.initialize(repeating: placeholder, count: 2 * self.outputCount)
    }

    deinit {
        busPorts.deallocate()
        busBuffers.deallocate()
    }

    /// One period: fetch the port buffers and the period's first frame, then let the engine
    /// render straight into the ports. Runs on JACK's real-time thread. Its only C calls are
    /// JACK's RT-safe port, MIDI and clock reads (`jack_port_get_buffer`, `jack_last_frame_time`,
    /// `jack_get_time`, `jack_get_sample_rate`, the MIDI event calls); the mixing itself is the
    /// engine's checked `@_noLocks` render.
    func process(frames: UInt32) -> Int32 {
        guard let client, let leftPort, let rightPort,
              let l = jack_port_get_buffer(leftPort, frames), let r = jack_port_get_buffer(rightPort, frames)
        else { return 0 }
        let raw = jack_last_frame_time(client)
        let stamp = clock.stamp(raw: raw)
        let uncounted = gaps.cycle(at: jack_get_time(), stamp: stamp, frames: Int64(frames),
                                   sampleRate: Double(jack_get_sample_rate(client)))
        if uncounted != 0 { uncountedFrames.add(uncounted, ordering: .relaxed) }
        let periodStart = stamp + engine.clockAdvance.load(ordering: .relaxed)
        let left = l.assumingMemoryBound(to: Float.self), right = r.assumingMemoryBound(to: Float.self)
        if let midiInPort { receiveMIDI(midiInPort, frames: frames, periodStart: periodStart) }
        if outputCount == 1 {
            engine.render(frameCount: Int(frames), periodStart: periodStart, left: left, right: right)
        } else {
            busBuffers[0] = left
            busBuffers[1] = right
            var k = 2
            while k < 2 * outputCount {
                // A registered port always has a buffer; were one missing, the outputs from it
                // on would be left out (their voices then go to the main mix).
                guard let port = busPorts[k], let buffer = jack_port_get_buffer(port, frames) else {
                    // The pair's left port, fetched already, is written as silence.
                    if k & 1 == 1 { busBuffers[k - 1].update(repeating: 0, count: Int(frames)) }
                    break
                }
                busBuffers[k] = buffer.assumingMemoryBound(to: Float.self)
                k += 1
            }
            engine.render(frameCount: Int(frames), periodStart: periodStart, outputs: busBuffers, outputCount: k / 2)
        }
        if let midiOutPort { sendMIDI(midiOutPort, frames: frames, periodStart: periodStart) }
        if let recordTap { recordTap.write(left: left, right: right, count: Int(frames), periodStart: periodStart) }
        if jack_last_frame_time(client) != raw { overrunPeriods.add(1, ordering: .relaxed) }
        return 0
    }

    /// Hands this period's note-ons to the engine, each due at its frame inside this period plus
    /// one period: the next period is the first the engine can still start them in, so the
    /// latency is exactly one period, never jittery. Real-time safe: JACK's MIDI reads are
    /// RT-safe and `receiveNoteOn` only queues.
    private func receiveMIDI(_ port: OpaquePointer, frames: UInt32, periodStart: Frame) {
        guard let buffer = jack_port_get_buffer(port, frames) else { return }
        let count = jack_midi_get_event_count(buffer)
        var event = jack_midi_event_t()
        var i: UInt32 = 0
        while i < count {
            if jack_midi_event_get(&event, buffer, i) == 0, let data = event.buffer {
                engine.receiveMIDI(UnsafePointer(data), count: event.size,
                                   at: periodStart + Frame(event.time) + Frame(frames))
            }
            i += 1
        }
    }
}

/// The host clock's cycles that JACK's frame time did not count. A netjack2 slave's frame
/// time counts only the cycles its server ran: when the server stops (a busy or suspended
/// host) its net driver restarts, the master runs on without it, and the slave's frame time
/// resumes where it stopped (JACK2's `JackFrameTimer::InitFrameTimeAux`), behind the master's
/// timeline by the cycles it missed. Every other server's frame time follows its clock across
/// a gap (`ResetFrameTime`), or the server waits for its clients (`-S`, freewheeling): there
/// the uncounted frames are not used (`LivePlayback` takes them only when a slave's ports come
/// back).
///
/// Each cycle's wake-up is compared with the expected one, a filtered estimate that follows
/// the cycles (so that the host clock's drift against the audio clock, and a wake-up's own
/// jitter, do not add up): the whole cycles between them, less the cycles the frame time
/// advanced, are uncounted. A late wake-up followed by one on time counts +1 and −1. A
/// wake-up more than half a period late can be counted one cycle off. Process thread only.
struct CycleGaps {
    private var expected = 0.0
    private var lastStamp: Int64 = 0
    private var lastFrames: Int64 = 0

    /// The uncounted frames of the cycle that woke at `now` (microseconds, JACK's clock) and is
    /// stamped `stamp`, `frames` long; 0 on most cycles.
    mutating func cycle(at now: UInt64, stamp: Int64, frames: Int64, sampleRate: Double) -> Int64 {
        defer { lastStamp = stamp; lastFrames = frames }
        // The first cycle, and the first of a new period size, start the count again.
        guard frames == lastFrames, sampleRate > 0, frames > 0 else {
            expected = Double(now)
            return 0
        }
        let periodMicroseconds = Double(frames) * 1e6 / sampleRate
        let cycles = ((Double(now) - expected) / periodMicroseconds).rounded()
        let predicted = expected + cycles * periodMicroseconds
        // First order: a tenth of each wake-up's deviation.
        expected = predicted + 0.1 * (Double(now) - predicted)
        // The frame time's advance in cycles, rounded as the host clock's are (a skip of part of
        // a period, counted by both, leaves nothing).
        let counted = (Double(stamp - lastStamp) / Double(frames)).rounded()
        guard cycles.magnitude < 1e9, counted.magnitude < 1e9 else { expected = Double(now); return 0 }
        return (Int64(cycles) - Int64(counted)) * frames
    }
}

extension ProcessContext {
    /// Writes the MIDI messages the engine rendered for this period into the output port's
    /// buffer, each at its frame's offset in the period. Real-time safe: JACK's MIDI writes are
    /// RT-safe; the engine's list is read in place.
    func sendMIDI(_ port: OpaquePointer, frames: UInt32, periodStart: Frame) {
        guard let buffer = jack_port_get_buffer(port, frames) else { return }
        jack_midi_clear_buffer(buffer)
        let count = engine.midiOutputCount
        var i = 0
        while i < count {
            let message = engine.midiOutput(at: i)
            let offset = message.frame - periodStart
            if offset >= 0 && offset < Int64(frames) {
                var bytes = message.bytes
                let status = withUnsafeBytes(of: &bytes) { raw in
                    jack_midi_event_write(buffer, jack_nframes_t(offset), raw.baseAddress!.assumingMemoryBound(to: jack_midi_data_t.self),
                                          Int(message.length))
                }
                // The port's buffer is full (a burst: clock ticks deferred over a long lost
                // stretch, say): the message is lost, and counted.
                if status != 0 { unwrittenMIDI.add(1, ordering: .relaxed) }
            }
            i += 1
        }
    }
}

// The C callbacks recover the context from the opaque argument without retaining it (the
// JACKClient owns it for the client's whole life).
let processCallback: JackProcessCallback = { frames, arg in
    Unmanaged<ProcessContext>.fromOpaque(arg!)._withUnsafeGuaranteedRef { $0.process(frames: frames) }
}

let xrunCallback: JackXRunCallback = { arg in
    _ = Unmanaged<ProcessContext>.fromOpaque(arg!)._withUnsafeGuaranteedRef { $0.xruns.add(1, ordering: .relaxed) }
    return 0
}

/// The server's period changed: the engine's expected period follows (tail rings already sized
/// stay as they are; a kit loaded later is measured against the new one).
let bufferSizeCallback: JackBufferSizeCallback = { frames, arg in
    Unmanaged<ProcessContext>.fromOpaque(arg!)._withUnsafeGuaranteedRef { $0.engine.expectedPeriodFrames = Int(frames) }
    return 0
}

let shutdownCallback: JackInfoShutdownCallback = { _, _, arg in
    Unmanaged<ProcessContext>.fromOpaque(arg!)._withUnsafeGuaranteedRef { $0.shutDown.store(true, ordering: .releasing) }
}
