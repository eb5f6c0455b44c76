import Foundation
import Locking

/// A real `jackd -d dummy` server under a unique name, for one test. Stopped by its own PID in
/// `stop()` and, as a fallback, in deinit (so a failing test still stops it).
///
/// Synchronous (`jackd -S`) by default: the server waits for every client each cycle, so a
/// busy machine makes cycles late but never skips a client, and exactness can be asserted.
/// Fault tests ask for an asynchronous server (`synchronous: false`), which does skip clients.
public final class JACKServer: @unchecked Sendable {
    public enum Kind: Sendable { case jack2, pipewire }
    public let name: String
    public let sampleRate: Int
    public let period: Int
    private let process = Process()
    private static let counter = LockedCounter()

    public let synchronous: Bool
    /// JACK2's `jackd`, or a private PipeWire daemon serving JACK clients through its own
    /// libjack (`pw-jack`).
    public let kind: Kind
    /// What a client program of this server needs in its environment: nothing for JACK2; for
    /// PipeWire, its runtime directory and PipeWire's libjack first on the library path (as
    /// `pw-jack` sets it). The test process itself keeps JACK2's libjack: clients opened in it
    /// reach JACK2 servers only.
    public let environment: [String: String]
    private var runtimeDirectory: String?

    /// `cycleMicroseconds`: the dummy driver's wait between cycles (default: a period's real
    /// duration); shorter runs the server faster than real time, for tests that need many periods.
    public init(period: Int, sampleRate: Int = 48000, name: String? = nil, synchronous: Bool = true,
                cycleMicroseconds: Int? = nil) throws {
        try requireTestTool("/usr/bin/jackd", "Debian's jackd2")
        self.synchronous = synchronous
        kind = .jack2
        environment = [:]
        self.name = name ?? "sampler-test-\(getpid())-\(JACKServer.counter.next())"
        self.sampleRate = sampleRate
        self.period = period
        process.executableURL = URL(fileURLWithPath: "/usr/bin/jackd")
        // A synchronous server waits for a late client only two periods unless `-t` (ms) says
        // otherwise (JACK2's `JackEngineControl::UpdateTimeOut`): 2.7 ms at 64 frames, which a
        // busy 2-core machine exceeds. With 500 ms it waits out any scheduling delay, so it does
        // not skip a client that is merely slow.
        process.arguments = (synchronous ? ["-S", "-t", "500"] : []) + ["-n", self.name, "-d", "dummy", "-r", "\(sampleRate)", "-p", "\(period)"]
            + (cycleMicroseconds.map { ["-w", "\($0)"] } ?? [])
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        // One server starts at a time on this machine: two jackd started at the same instant
        // sometimes left one that never answered (4 of 16 runs of two live suites side by side;
        // 0 of 5 one after the other). `make test` runs two test processes side by side, so the
        // lock is a file lock, which excludes threads of this process and other processes alike.
        let wait = try withStartLock { () throws -> Int32 in
            try process.run()
            // jack_wait blocks until the server answers (or 10 s pass).
            return try run("/usr/bin/jack_wait", ["-w", "-t", "10"], environment: ["JACK_DEFAULT_SERVER": self.name])
        }
        guard wait == 0 else {
            stop()
            throw TestFailure("jackd \(self.name) did not come up")
        }
    }

    /// A `jackd` named `name` with `arguments` (everything after `jackd`, `-n NAME` included),
    /// started through `launch` (a namespace's `command`: jackd is still the process, so it is
    /// stopped by its own PID). Used for netjack2's master and slave (`NetJackRig`).
    public init(name: String, arguments: [String], period: Int, sampleRate: Int, synchronous: Bool,
                launch: (URL, [String]) -> (URL, [String])) throws {
        try requireTestTool("/usr/bin/jackd", "Debian's jackd2")
        self.synchronous = synchronous
        kind = .jack2
        environment = [:]
        self.name = name
        self.sampleRate = sampleRate
        self.period = period
        (process.executableURL, process.arguments) = launch(URL(fileURLWithPath: "/usr/bin/jackd"), arguments)
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        let wait = try withStartLock { () throws -> Int32 in
            try process.run()
            return try run("/usr/bin/jack_wait", ["-w", "-t", "10"], environment: ["JACK_DEFAULT_SERVER": name])
        }
        guard wait == 0 else {
            stop()
            throw TestFailure("jackd \(name) (\(arguments.joined(separator: " "))) did not come up")
        }
    }

    /// A private headless PipeWire daemon (its default configuration: the Dummy-Driver, no
    /// session manager) in a runtime directory of its own, its graph held at `quantum` frames
    /// and `sampleRate` (`clock.force-quantum`, `clock.force-rate`). Clients reach it with
    /// `environment` as server `pipewire-0`. Stopped by its PID, its directory removed.
    public init(pipewireQuantum quantum: Int, sampleRate: Int = 48000) throws {
        try requireTestTool("/usr/bin/pipewire", "Debian's pipewire")
        try requireTestTool("/usr/bin/pw-metadata", "Debian's pipewire-bin")
        synchronous = false
        kind = .pipewire
        self.sampleRate = sampleRate
        period = quantum
        name = "pipewire-0"
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("sampler-pw-\(getpid())-\(JACKServer.counter.next())").path
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        runtimeDirectory = dir
        environment = ["XDG_RUNTIME_DIR": dir, "PIPEWIRE_RUNTIME_DIR": dir, "JACK_DEFAULT_SERVER": "pipewire-0",
                       "LD_LIBRARY_PATH": "/usr/${LIB}/pipewire-0.3/jack", "PIPEWIRE_LOG_SYSTEMD": "false"]
        process.executableURL = URL(fileURLWithPath: "/usr/bin/pipewire")
        process.arguments = []
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        // Up once its socket answers: the settings are written through it.
        let up = waitUntil(timeout: 10) {
            guard FileManager.default.fileExists(atPath: dir + "/pipewire-0") else { return false }
            return (try? self.setSetting("clock.force-rate", "\(sampleRate)")) == 0
        }
        guard up, try setSetting("clock.force-quantum", "\(quantum)") == 0 else {
            stop()
            throw TestFailure("pipewire in \(dir) did not come up")
        }
    }

    private func setSetting(_ key: String, _ value: String) throws -> Int32 {
        try run("/usr/bin/pw-metadata", ["-n", "settings", "0", key, value], environment: environment)
    }

    /// Changes the server's period while it runs: `jack_bufsize` on JACK2, the forced quantum on
    /// PipeWire. True when the request was taken.
    @discardableResult
    public func setPeriod(_ frames: Int) -> Bool {
        switch kind {
        case .jack2:
            return (try? run("/usr/bin/jack_bufsize", ["\(frames)"], environment: ["JACK_DEFAULT_SERVER": name])) == 0
        case .pipewire:
            return (try? setSetting("clock.force-quantum", "\(frames)")) == 0
        }
    }

    public var pid: Int32 { process.processIdentifier }

    /// Stops the server by its PID and waits for it to exit. Idempotent.
    public func stop() {
        if process.isRunning {
            kill(process.processIdentifier, SIGTERM)
            process.waitUntilExit()
        }
        if let runtimeDirectory {
            try? FileManager.default.removeItem(atPath: runtimeDirectory)
            self.runtimeDirectory = nil
        }
    }

    /// Kills the server abruptly (SIGKILL), as a crash would. JACK keeps a killed server's entry
    /// in its shared registry (8 entries at most); call `clearAfterKill()` once the test no longer
    /// needs the server to be gone.
    public func kill9() {
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
    }

    /// Frees the registry entry a killed server left behind, by starting a server under the same
    /// name and stopping it cleanly.
    public func clearAfterKill() {
        guard kind == .jack2, !process.isRunning, let again = try? JACKServer(period: period, sampleRate: sampleRate, name: name, synchronous: synchronous) else { return }
        again.stop()
    }

    deinit { stop() }
}

/// Runs `body` holding an exclusive `flock` on a file shared by every test process of this user
/// (each call opens the file anew, so threads of one process exclude each other too).
private func withStartLock<T>(_ body: () throws -> T) throws -> T {
    let path = FileManager.default.temporaryDirectory.appendingPathComponent("sampler-tests-jackd-start-\(getuid()).lock").path
    let fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
    guard fd >= 0 else { throw TestFailure("cannot open the server start lock \(path): errno \(errno)") }
    defer { close(fd) }
    while flock(fd, LOCK_EX) != 0 {
        guard errno == EINTR else { throw TestFailure("cannot lock \(path): errno \(errno)") }
    }
    return try body()
}

public struct TestFailure: Error, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}

public final class LockedCounter: @unchecked Sendable {
    private let lock = NSLock()
    private var value = 0
    public func next() -> Int { lock.lock(); defer { lock.unlock() }; value += 1; return value }
}

/// Runs a program to completion and returns its exit status.
@discardableResult
public func run(_ path: String, _ arguments: [String], environment: [String: String] = [:]) throws -> Int32 {
    let p = Process()
    p.executableURL = URL(fileURLWithPath: path)
    p.arguments = arguments
    p.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
    p.standardOutput = FileHandle.nullDevice
    p.standardError = FileHandle.nullDevice
    try p.run()
    p.waitUntilExit()
    return p.terminationStatus
}

/// The directory holding the package's built products (next to the test bundle).
public var productsDirectory: URL {
    URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
}

/// What a finished program printed and how it exited.
public struct ProgramResult {
    public let status: Int32
    public let stdout: String
    public let stderr: String
    public let seconds: Double
}

/// Runs the package's `sampler` binary with `arguments` to completion (killing it after
/// `timeout` seconds, which then fails the expectation on its status).
public func runSampler(_ arguments: [String], environment: [String: String] = [:], timeout: Double = 60) throws -> ProgramResult {
    try runTool(productsDirectory.appendingPathComponent("sampler"), arguments, environment: environment, timeout: timeout)
}

/// Runs `executable` with `arguments` to completion, as `runSampler` does.
public func runTool(_ executable: URL, _ arguments: [String], environment: [String: String] = [:], timeout: Double = 60) throws -> ProgramResult {
    let p = Process()
    p.executableURL = executable
    p.arguments = arguments
    p.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
    let out = Pipe(), err = Pipe()
    p.standardOutput = out
    p.standardError = err
    let started = Date()
    try p.run()
    let killer = DispatchWorkItem { if p.isRunning { p.terminate() } }
    DispatchQueue.global().asyncAfter(deadline: .now() + timeout, execute: killer)
    // Read both pipes to the end (the program exits when done; its pipes then close).
    let group = DispatchGroup()
    let outData = Locked(Data()), errData = Locked(Data())
    DispatchQueue.global().async(group: group) { let d = out.fileHandleForReading.readDataToEndOfFile(); outData.withLock { $0 = d } }
    DispatchQueue.global().async(group: group) { let d = err.fileHandleForReading.readDataToEndOfFile(); errData.withLock { $0 = d } }
    p.waitUntilExit()
    group.wait()
    killer.cancel()
    return ProgramResult(status: p.terminationStatus, stdout: String(decoding: outData.withLock { $0 }, as: UTF8.self),
                         stderr: String(decoding: errData.withLock { $0 }, as: UTF8.self), seconds: Date().timeIntervalSince(started))
}

/// A fresh temporary directory, inside this test process's own directory
/// (`$TMPDIR/sampler-tests-PID`), which is removed when the process exits: a run of the suite
/// leaves nothing behind in /tmp.
public func temporaryDirectory() throws -> URL {
    let url = testProcessDirectory.appendingPathComponent(UUID().uuidString)
    try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    return url
}

/// Created on first use; a directory of the same name left by an earlier process that had this
/// PID is removed first. Removed at exit (`atexit`; a killed process leaves it).
private let testProcessDirectory: URL = {
    let url = FileManager.default.temporaryDirectory.appendingPathComponent("sampler-tests-\(getpid())")
    try? FileManager.default.removeItem(at: url)
    atexit { removeTestProcessDirectory() }
    return url
}()

private func removeTestProcessDirectory() {
    try? FileManager.default.removeItem(at: testProcessDirectory)
}

/// The package's root directory (for Patches/ and Samples/).
public var packageRoot: URL {
    URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
}
