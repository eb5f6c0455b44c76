import CJACK
import Foundation
import SamplerCore

/// A JACK client that plays an `Engine` through two output ports, `out_L` and `out_R`, and
/// takes note-ons for the engine's instruments on a MIDI input port, `midi_in` (played exactly
/// one period after the frame they arrive on); with `midiOutput`, also a MIDI output port,
/// `midi_out`, that sends the engine's MIDI messages (`Command.midi`) on their frames; with
/// `outputs`, a stereo pair `NAME_L`/`NAME_R` for each (the engine's outputs 1, 2, …, beside the
/// main mix on `out_L`/`out_R`).
///
/// Control thread only (all members); the engine's render runs on JACK's process thread.
/// Keep the client alive while it is active; `close()` (or deinit) deactivates and closes it.
///
/// `@unchecked Sendable` by contract: its only mutable state, `client`, is used by one control
/// thread at a time (callers serialize, e.g. `AudioSession` under its lock); JACK's threads never
/// reach the `JACKClient`, only its `ProcessContext` and `RouteLog` (each with its own contract).
package final class JACKClient: @unchecked Sendable {
    package let engine: Engine
    /// The name JACK gave the client (it may add a suffix if the name was taken).
    package let name: String
    let context: ProcessContext
    private var client: OpaquePointer?
    private let unmanagedContext: Unmanaged<ProcessContext>
    let routeLog = RouteLog()

    /// The open client handle, nil once closed.
    var handle: OpaquePointer? { client }

    /// Opens a client on `serverName` (nil: `JACK_DEFAULT_SERVER` or the default server) and
    /// registers its output ports. Never starts a server. Throws `.serverNotRunning` if none answers.
    package init(name: String = "sampler", serverName: String? = nil, engine: Engine,
                recordTap: RecordTap? = nil, midiOutput: Bool = false, outputs: [String] = [], exactName: Bool = false) throws(JACKError) {
        self.engine = engine
        self.outputs = Array(outputs.prefix(Engine.maxOutputCount - 1))
        silenceJACKLibraryMessages()
        var status = jack_status_t(0)
        let opened: OpaquePointer? = name.withCString { cname in
            if let serverName {
                return serverName.withCString { sampler_jack_client_open(cname, $0, exactName ? 3 : 1, &status) }
            }
            return sampler_jack_client_open(cname, nil, exactName ? 3 : 1, &status)
        }
        guard let opened else {
            if status.rawValue & JackServerFailed.rawValue != 0 {
                throw .serverNotRunning(server: serverName ?? ProcessInfo.processInfo.environment["JACK_DEFAULT_SERVER"])
            }
            // JACK2 answers a taken exact name with JackServerError (the server refused the
            // name), PipeWire with JackNameNotUnique.
            if exactName, status.rawValue & (JackNameNotUnique.rawValue | JackServerError.rawValue) != 0 { throw .nameTaken(name) }
            throw .clientOpenFailed(status: status.rawValue)
        }
        client = opened
        self.name = String(cString: jack_get_client_name(opened))
        context = ProcessContext(engine: engine, outputCount: self.outputs.count + 1)
        context.client = opened
        context.recordTap = recordTap
        unmanagedContext = Unmanaged.passUnretained(context)
        let arg = unmanagedContext.toOpaque()

        func register(_ port: String) throws(JACKError) -> OpaquePointer {
            guard let p = jack_port_register(opened, port, JACK_DEFAULT_AUDIO_TYPE, UInt(JackPortIsOutput.rawValue), 0)
            else { throw .portRegistrationFailed(port) }
            return p
        }
        func registerMIDIInput(_ port: String) throws(JACKError) -> OpaquePointer {
            guard let p = jack_port_register(opened, port, JACK_DEFAULT_MIDI_TYPE, UInt(JackPortIsInput.rawValue), 0)
            else { throw .portRegistrationFailed(port) }
            return p
        }
        func registerMIDIOutput(_ port: String) throws(JACKError) -> OpaquePointer {
            guard let p = jack_port_register(opened, port, JACK_DEFAULT_MIDI_TYPE, UInt(JackPortIsOutput.rawValue), 0)
            else { throw .portRegistrationFailed(port) }
            return p
        }
        do {
            context.leftPort = try register("out_L")
            context.rightPort = try register("out_R")
            for (k, output) in self.outputs.enumerated() {
                context.busPorts[2 * (k + 1)] = try register("\(output)_L")
                context.busPorts[2 * (k + 1) + 1] = try register("\(output)_R")
            }
            context.midiInPort = try registerMIDIInput("midi_in")
            if midiOutput { context.midiOutPort = try registerMIDIOutput("midi_out") }
        } catch {
            jack_client_close(opened)
            client = nil
            throw error
        }
        engine.expectedPeriodFrames = Int(jack_get_buffer_size(opened))
        jack_set_process_callback(opened, processCallback, arg)
        jack_set_xrun_callback(opened, xrunCallback, arg)
        // Nothing to reallocate when the period changes (the engine renders blocks of any size
        // into the port buffers): only the engine's expected period follows it.
        jack_set_buffer_size_callback(opened, bufferSizeCallback, arg)
        jack_on_info_shutdown(opened, shutdownCallback, arg)
        routeLog.client = opened
        let logArg = Unmanaged.passUnretained(routeLog).toOpaque()
        jack_set_port_connect_callback(opened, portConnectCallback, logArg)
        jack_set_port_registration_callback(opened, portRegistrationCallback, logArg)
    }

    deinit { close() }

    /// JACK's process thread for this client (where the callback runs), once active.
    package var processThread: pthread_t? {
        guard let client else { return nil }
        return jack_client_thread_id(client)
    }

    /// The server's sample rate in frames per second.
    package var sampleRate: Double { client.map { Double(jack_get_sample_rate($0)) } ?? 0 }
    /// The server's period size in frames.
    package var bufferSize: Int { client.map { Int(jack_get_buffer_size($0)) } ?? 0 }
    /// Full names of the two output ports of the main mix.
    package var outputPortNames: [String] { ["\(name):out_L", "\(name):out_R"] }
    /// The outputs besides the main mix (engine outputs 1, 2, …).
    package let outputs: [String]
    /// Full names of output `output`'s two ports (one of `outputs`).
    package func portNames(ofOutput output: String) -> [String] { ["\(name):\(output)_L", "\(name):\(output)_R"] }
    /// Full name of the MIDI output port, when the client has one.
    package var midiOutputPortName: String? { context.midiOutPort == nil ? nil : "\(name):midi_out" }

    /// Starts processing. After this the engine renders on JACK's thread.
    package func activate() throws(JACKError) {
        guard let client, jack_activate(client) == 0 else { throw .activationFailed }
    }

    /// The physical playback ports (sound-card outputs), in JACK's order.
    package func physicalPlaybackPorts() -> [String] {
        guard let client else { return [] }
        let flags = UInt(JackPortIsPhysical.rawValue | JackPortIsInput.rawValue)
        guard let list = jack_get_ports(client, nil, JACK_DEFAULT_AUDIO_TYPE, flags) else { return [] }
        defer { jack_free(UnsafeMutableRawPointer(list)) }
        var names: [String] = []
        var i = 0
        while let p = list[i] { names.append(String(cString: p)); i += 1 }
        return names
    }

    /// Connects out_L and out_R to `ports` (one for each; a single port gets both).
    package func connectOutputs(to ports: [String]) throws(JACKError) {
        try connect(outputPortNames, to: ports)
    }

    /// Connects named output `output`'s two ports (one of `outputs`) to `ports` (one for each;
    /// a single port gets both).
    package func connectOutput(_ output: String, to ports: [String]) throws(JACKError) {
        try connect(portNames(ofOutput: output), to: ports)
    }

    private func connect(_ pair: [String], to ports: [String]) throws(JACKError) {
        guard let client else { return }
        for (i, port) in ports.prefix(2).enumerated() {
            guard jack_port_by_name(client, port) != nil else { throw .noSuchPort(port) }
            let from = pair[i]
            let result = jack_connect(client, from, port)
            if result != 0 && result != EEXIST { throw .connectFailed(from: from, to: port) }
        }
        if ports.count == 1 {
            let result = jack_connect(client, pair[1], ports[0])
            if result != 0 && result != EEXIST { throw .connectFailed(from: pair[1], to: ports[0]) }
        }
    }

    /// Connects port `source` to port `destination` (full names; already connected is fine).
    package func connect(_ source: String, to destination: String) throws(JACKError) {
        guard let client else { return }
        guard jack_port_by_name(client, destination) != nil else { throw .noSuchPort(destination) }
        let result = jack_connect(client, source, destination)
        if result != 0 && result != EEXIST { throw .connectFailed(from: source, to: destination) }
    }

    /// The device clock now: the frame being heard about now, as a 64-bit frame count on the same
    /// clock the engine's periods are stamped with. Widened from JACK's 32-bit `jack_frame_time`.
    package func currentFrame() -> Frame {
        guard let client else { return engine.renderedFrame }
        return widen(jack_frame_time(client))
    }

    /// Xruns JACK reported since the client opened.
    package var xrunCount: Int { context.xruns.load(ordering: .relaxed) }
    /// Periods whose render ended after the server's next cycle had begun (`ProcessContext`).
    package var overrunCount: Int { context.overrunPeriods.load(ordering: .relaxed) }
    /// MIDI messages the output port's buffer had no room for. Any thread.
    package var unwrittenMIDICount: Int { context.unwrittenMIDI.load(ordering: .relaxed) }
    /// True once the server has shut down or thrown the client out.
    package var isShutDown: Bool { context.shutDown.load(ordering: .acquiring) }

    /// The output ports' playback latency range in frames (min, max), from JACK.
    package var playbackLatency: (min: Int, max: Int) {
        guard let port = context.leftPort else { return (0, 0) }
        var range = jack_latency_range_t()
        jack_port_get_latency_range(port, JackPlaybackLatency, &range)
        return (Int(range.min), Int(range.max))
    }

    /// Deactivates and closes the client. Idempotent. After a server shutdown only the close is
    /// attempted (the server is gone; JACK still frees the client's resources).
    package func close() {
        guard let c = client else { return }
        client = nil
        if !isShutDown { jack_deactivate(c) }
        jack_client_close(c)
        context.client = nil
        routeLog.client = nil
    }
}

/// libjack prints its own diagnostics ("Cannot connect to server socket…") to stderr; this
/// program reports errors itself, in one line, so those are dropped.
private func silenceJACKLibraryMessages() {
    jack_set_error_function { _ in }
    jack_set_info_function { _ in }
}
