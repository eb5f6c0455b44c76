// The JACK client plumbing the test instruments share (sampler-capture, sampler-disturb,
// sampler-midi-capture, sampler-midi-send): opening a client, registering ports, activating,
// connecting to another client's port, and ending the program on failure. Only CJACK underneath:
// the instruments are independent witnesses and share no code with the engine.
//
// Everything here is for the tool's main thread. Nothing may be called from JACK's process
// thread: these functions allocate, sleep and take JACK's server locks. The process callbacks
// stay in each tool, as top-level @convention(c)-compatible functions.
import CJACK
import Foundation

/// Writes "TOOL: message" and a newline to standard error and exits with status 2.
/// Main thread (any thread but JACK's process thread).
public func toolFail(_ tool: String, _ message: String) -> Never {
    FileHandle.standardError.write(Data((tool + ": " + message + "\n").utf8))
    exit(2)
}

/// An open JACK client of a test instrument. Each operation that can fail ends the program through
/// `toolFail(tool, …)` with the text the instruments have always printed, so scripts and tests
/// can match it. Main thread only, including `close()`.
public struct ToolClient {
    /// The program's name, the prefix of its error messages ("sampler-capture").
    public let tool: String
    /// The `jack_client_t *`, for the calls that stay in the tool (callbacks, clock queries).
    public let client: OpaquePointer

    /// Opens the client `name` on `server` (nil: the default server, JACK_DEFAULT_SERVER) without
    /// starting a server; on failure ends with "cannot connect to JACK server SERVER" ("default"
    /// when nil). Main thread. If the tool waits for signals (`StopSignals`), block them first:
    /// JACK's threads, started here, inherit the signal mask.
    public init(tool: String, name: String, server: String?) {
        var status = jack_status_t(0)
        let opened: OpaquePointer? = name.withCString { name in
            if let server { return server.withCString { sampler_jack_client_open(name, $0, 1, &status) } }
            return sampler_jack_client_open(name, nil, 1, &status)
        }
        guard let opened else { toolFail(tool, "cannot connect to JACK server \(server ?? "default")") }
        self.tool = tool
        client = opened
    }

    /// The client's name as JACK gave it (it may differ from the name asked for). Main thread.
    public var name: String { String(cString: jack_get_client_name(client)) }

    /// Registers the port `shortName` of `type` (`JACK_DEFAULT_AUDIO_TYPE`, `JACK_DEFAULT_MIDI_TYPE`)
    /// with `flags` (`JackPortIsInput`, `JackPortIsOutput`); on failure ends with "cannot register
    /// port". Main thread, before `activate()`.
    public func register(_ shortName: String, type: String, flags: JackPortFlags) -> OpaquePointer {
        guard let port = jack_port_register(client, shortName, type, UInt(flags.rawValue), 0) else {
            toolFail(tool, "cannot register port")
        }
        return port
    }

    /// Activates the client (its process callback starts running on JACK's thread); on failure
    /// ends with "cannot activate". Main thread, after the callbacks are set.
    public func activate() {
        guard jack_activate(client) == 0 else { toolFail(tool, "cannot activate") }
    }

    /// Waits for the port `fullName` ("client:port") to exist, polling every 10 ms at most `tries`
    /// times (the other client may still be starting). True once it exists; false if it still does
    /// not after `tries` polls. Main thread.
    public func waitForPort(_ fullName: String, tries: Int) -> Bool {
        var waited = 0
        while jack_port_by_name(client, fullName) == nil {
            if waited >= tries { return false }
            usleep(10_000); waited += 1
        }
        return true
    }

    /// Connects `source` to `destination` (full port names), retrying every 10 ms up to `tries`
    /// more times, since a port that has just appeared may not accept connections for a moment.
    /// Returns 0 once connected (an existing connection, EEXIST, counts as connected), else the
    /// last error from jack_connect. Main thread, after `activate()`.
    public func connect(from source: String, to destination: String, tries: Int) -> Int32 {
        var result = jack_connect(client, source, destination)
        var retried = 0
        while result != 0 && result != EEXIST && retried < tries {
            usleep(10_000); retried += 1
            result = jack_connect(client, source, destination)
        }
        return result == EEXIST ? 0 : result
    }

    /// Deactivates and closes the client: once it returns the process callback no longer runs.
    /// Main thread; the client must not be used afterwards.
    public func close() {
        jack_deactivate(client)
        jack_client_close(client)
    }
}
