import Foundation

/// A real `jackd -d dummy` server under a unique name, for one test. Stopped by its own PID in
/// `stop()` and, as a fallback, in deinit (so a failing test still stops it).
public final class JACKServer: @unchecked Sendable {
    public let name: String
    public let sampleRate: Int
    public let period: Int
    private let process = Process()
    private static let counter = LockedCounter()

    public init(period: Int, sampleRate: Int = 48000) throws {
        name = "sampler-test-\(getpid())-\(JACKServer.counter.next())"
        self.sampleRate = sampleRate
        self.period = period
        process.executableURL = URL(fileURLWithPath: "/usr/bin/jackd")
        process.arguments = ["-n", name, "-d", "dummy", "-r", "\(sampleRate)", "-p", "\(period)"]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        // jack_wait blocks until the server answers (or 10 s pass).
        let wait = try run("/usr/bin/jack_wait", ["-w", "-t", "10"], environment: ["JACK_DEFAULT_SERVER": name])
        guard wait == 0 else {
            stop()
            throw TestFailure("jackd \(name) did not come up")
        }
    }

    public var pid: Int32 { process.processIdentifier }

    /// Stops the server by its PID and waits for it to exit. Idempotent.
    public func stop() {
        if process.isRunning {
            kill(process.processIdentifier, SIGTERM)
            process.waitUntilExit()
        }
    }

    /// Kills the server abruptly (SIGKILL), as a crash would.
    public func kill9() {
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
    }

    deinit { stop() }
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
