import Foundation

/// A private `jackd -d dummy` server, stopped by its PID.
final class DummyServer {
    let name: String
    private let process = Process()

    init(period: Int) throws {
        name = "sampler-bench-\(getpid())"
        process.executableURL = URL(fileURLWithPath: "/usr/bin/jackd")
        process.arguments = ["-n", name, "-d", "dummy", "-r", "48000", "-p", "\(period)"]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        let wait = Process()
        wait.executableURL = URL(fileURLWithPath: "/usr/bin/jack_wait")
        wait.arguments = ["-w", "-t", "10"]
        wait.environment = environment
        wait.standardOutput = FileHandle.nullDevice
        wait.standardError = FileHandle.nullDevice
        try wait.run()
        wait.waitUntilExit()
        guard wait.terminationStatus == 0 else {
            stop()
            throw BenchError("jackd \(name) did not come up")
        }
    }

    /// The environment a client needs to reach this server (and never start another).
    var environment: [String: String] {
        ProcessInfo.processInfo.environment.merging(["JACK_DEFAULT_SERVER": name, "JACK_NO_START_SERVER": "1"]) { $1 }
    }

    func stop() {
        if process.isRunning {
            kill(process.processIdentifier, SIGTERM)
            process.waitUntilExit()
        }
    }

    deinit { stop() }
}

struct BenchError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// Runs `path arguments` and returns what it printed (stdout and stderr) and its status.
func capture(_ path: String, _ arguments: [String], environment: [String: String]? = nil) -> (output: String, status: Int32) {
    let p = Process()
    p.executableURL = URL(fileURLWithPath: path)
    p.arguments = arguments
    if let environment { p.environment = environment }
    let pipe = Pipe()
    p.standardOutput = pipe
    p.standardError = pipe
    do { try p.run() } catch { return ("", -1) }
    let data = pipe.fileHandleForReading.readDataToEndOfFile()
    p.waitUntilExit()
    return (String(decoding: data, as: UTF8.self), p.terminationStatus)
}

/// 6: `sampler metronome 120` vs `klick 120`, side by side on one dummy server (128 frames at
/// 48 kHz), CPU time (all threads, user + system) over the same 30 s, after 3 s to start up.
func benchMetronome(samplerPath: String, report: Report, seconds: Double) throws {
    report.section("6. Metronome CPU: sampler metronome 120 vs klick 120, \(Int(seconds)) s on one dummy server (128 frames, 48 kHz)")
    let help = capture(samplerPath, ["--help"]).output
    let hasMetronome = help.split(separator: "\n").contains { $0.trimmingCharacters(in: .whitespaces).hasPrefix("metronome") }
    guard hasMetronome else {
        report.line("  n/a (metronome not built)")
        report.set("metronome", "n/a (metronome not built)")
        report.target("sampler metronome CPU vs klick", value: "n/a (metronome not built)", target: "≤ 1×", met: nil)
        return
    }
    guard FileManager.default.isExecutableFile(atPath: "/usr/bin/klick") else {
        report.line("  n/a (klick is not installed: scripts/install-deps.sh)")
        report.set("metronome", "n/a (klick not installed)")
        report.target("sampler metronome CPU vs klick", value: "n/a (klick not installed)", target: "≤ 1×", met: nil)
        return
    }
    let server = try DummyServer(period: 128)
    defer { server.stop() }
    // Connect both to the dummy server's playback ports, as a user would.
    let metronomeHelp = capture(samplerPath, ["metronome", "--help"]).output
    var samplerArguments = ["metronome", "120"]
    if metronomeHelp.contains("--server") { samplerArguments += ["--server", server.name] }
    if metronomeHelp.contains("--quiet") { samplerArguments += ["--quiet"] }
    let programs: [(name: String, path: String, arguments: [String])] = [
        ("sampler", samplerPath, samplerArguments),
        ("klick", "/usr/bin/klick", ["-n", "klick-bench", "-P", "120"]),
    ]
    var processes: [Process] = []
    defer {
        for p in processes where p.isRunning {
            kill(p.processIdentifier, SIGTERM)
            p.waitUntilExit()
        }
    }
    for program in programs {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: program.path)
        p.arguments = program.arguments
        p.environment = server.environment
        p.standardOutput = FileHandle.nullDevice
        p.standardError = FileHandle.nullDevice
        // Keep stdin away from the terminal: both read keys in interactive use.
        p.standardInput = FileHandle.nullDevice
        try p.run()
        processes.append(p)
    }
    usleep(3_000_000)
    let before = processes.map { ProcessCPU.read(pid: $0.processIdentifier) }
    usleep(UInt32(seconds * 1_000_000))
    let after = processes.map { ProcessCPU.read(pid: $0.processIdentifier) }
    let ports = capture("/usr/bin/jack_lsp", ["-c"], environment: server.environment).output
    var cpu: [String: (stat: Double, threads: Double?)] = [:]
    for (i, program) in programs.enumerated() {
        guard processes[i].isRunning, let b = before[i], let a = after[i] else {
            report.fail("\(program.name) \(program.arguments.joined(separator: " ")) exited before the 30 s were over")
            return
        }
        let threads = a.schedstatSeconds.flatMap { x in b.schedstatSeconds.map { x - $0 } }
        cpu[program.name] = (a.statSeconds - b.statSeconds, threads)
    }
    let connected = ports.contains("klick-bench:") && ports.contains("sampler")
    let s = cpu["sampler"]!, k = cpu["klick"]!
    let ratioStat = k.stat > 0 ? s.stat / k.stat : .infinity
    let ratioThreads = (s.threads ?? 0) / max(k.threads ?? 0, 1e-9)
    report.line("               CPU s (/proc/PID/stat)   CPU s (threads' schedstat)   % of one core")
    for name in ["sampler", "klick"] {
        let c = cpu[name]!
        report.line("  \(name.padding(toLength: 8, withPad: " ", startingAt: 0))\(col(c.stat, 2, width: 18))"
            + "\(col(c.threads ?? .nan, 4, width: 28))\(col(100 * (c.threads ?? c.stat) / seconds, 2, width: 16))")
    }
    report.line(String(format: "  sampler / klick: %.2f (stat, 10 ms ticks), %.2f (schedstat, ns)", ratioStat, ratioThreads)
        + (connected ? "" : "  [warning: jack_lsp did not show both clients]"))
    report.set("metronome", ["seconds": seconds, "samplerCPUSeconds": round(s.stat, 3), "klickCPUSeconds": round(k.stat, 3),
                             "samplerThreadSeconds": round(s.threads ?? -1, 5), "klickThreadSeconds": round(k.threads ?? -1, 5),
                             "ratio": round(ratioThreads, 3), "arguments": samplerArguments])
    report.target("sampler metronome CPU vs klick", value: String(format: "%.2f×", ratioThreads), target: "≤ 1×", met: ratioThreads <= 1)
}
