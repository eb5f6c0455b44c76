import Foundation

/// A program running in the background with its output collected (stdout and stderr together),
/// terminated after `timeout` seconds at the latest.
///
/// `@unchecked Sendable`: `data` is written once by the reading task and read only after
/// `group.wait()` in `finish()`, which orders the two.
public final class BackgroundProgram: @unchecked Sendable {
    public let process = Process()
    private let out = Pipe()
    private var data = Data()
    private let group = DispatchGroup()

    public init(_ url: URL, _ arguments: [String], timeout: Double, environment: [String: String] = [:]) throws {
        process.executableURL = url
        process.arguments = arguments
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        process.standardOutput = out
        process.standardError = out
        try process.run()
        let p = process
        DispatchQueue.global().asyncAfter(deadline: .now() + timeout) { if p.isRunning { p.terminate() } }
        DispatchQueue.global().async(group: group) { [out] in
            let d = out.fileHandleForReading.readDataToEndOfFile()
            self.data = d
        }
    }

    /// Waits for the exit; returns the status and everything printed.
    public func finish() -> (status: Int32, output: String) {
        process.waitUntilExit()
        group.wait()
        return (process.terminationStatus, String(decoding: data, as: UTF8.self))
    }
}

extension BackgroundProgram {
    /// Asks the program to stop (SIGTERM).
    public func terminate() {
        if process.isRunning { process.terminate() }
    }
}

extension BackgroundProgram {
    /// `sampler-disturb` as a hung client: connected to `target` (a `midi_in`), it sends nothing
    /// and never returns from its process callback from cycle `cycle` on, so an asynchronous
    /// server skips every client downstream of it. Terminate it when done (it then ends at once).
    public static func hangingClient(server: JACKServer, to target: String, afterCycle cycle: Int) throws -> BackgroundProgram {
        try BackgroundProgram(productsDirectory.appendingPathComponent("sampler-disturb"),
                              ["--server", server.name, "--to", target, "--name", "hanging",
                               "--sleep", "0", "--every", "1000000", "--hang-after", "\(cycle)"], timeout: 90)
    }
}
