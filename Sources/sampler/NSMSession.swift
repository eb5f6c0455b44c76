import Foundation
@preconcurrency import Glibc
import NSM
import ProgramHost
import SamplerCore

/// A command that can run in an NSM session: the options it keeps in the session's state file
/// (docs/nsm.md lists them).
protocol SessionKeeping {
    /// "play" or "metronome": the state file names the command it belongs to.
    static var sessionCommand: String { get }
    /// The kept options as this command's values say (file names absolute).
    var sessionOptions: [String: SessionValue] { get }
    /// Sets the kept options a state file holds, then checks the command again; an error names
    /// the file and the option.
    mutating func apply(sessionOptions: [String: SessionValue], file: String) throws
}

/// The NSM session a live command runs in when NSM_URL is set: announced with the `:dirty:`
/// capability, opened (its client id is the JACK client name), its state restored from and
/// saved to `PATH.json`, dirty while the keys or OSC have changed what a save keeps.
/// Control thread only.
final class NSMSession {
    let client: NSMClient
    let open: NSMOpen
    private let command: String
    /// What the state file holds (or would hold) as of the last save or the open.
    private var saved: [String: SessionValue] = [:]
    private var openAnswered = false

    /// The state file: the path the server gave, with an extension.
    var statePath: String { open.path + ".json" }

    /// NSM_URL, when set and not empty.
    static var url: String? {
        ProcessInfo.processInfo.environment["NSM_URL"].flatMap { $0.isEmpty ? nil : $0 }
    }

    private init(client: NSMClient, open: NSMOpen, command: String) {
        self.client = client
        self.open = open
        self.command = command
    }

    /// Announces the client to the server at `url` and waits for `/nsm/client/open`: up to 10 s
    /// for the announce's answer, then as long as the server takes. SIGINT or SIGTERM meanwhile
    /// ends the process at once (nothing is open yet).
    static func join(url: String, command: String) throws -> NSMSession {
        let client: NSMClient
        do { client = try NSMClient(url: url) } catch { throw SamplerError("\(error)") }
        let executable = URL(fileURLWithPath: CommandLine.arguments.first ?? "sampler").lastPathComponent
        guard client.announce(applicationName: "sampler \(command)", capabilities: ["dirty"], executable: executable, pid: getpid()) else {
            throw SamplerError("NSM_URL \(url): cannot send to the session manager there")
        }
        var signals = sigset_t()
        sigemptyset(&signals)
        sigaddset(&signals, SIGINT)
        sigaddset(&signals, SIGTERM)
        var tick = timespec(tv_sec: 0, tv_nsec: 10_000_000)
        let deadline = Date().addingTimeInterval(10)
        var announced = false
        while true {
            for event in client.take() {
                switch event {
                case .announced(_, let server, _):
                    announced = true
                    print("NSM: announced to \(server.isEmpty ? "the session manager" : server) at \(url)")
                case .failed(let path, let code, let message) where path == "/nsm/server/announce":
                    throw SamplerError("NSM_URL \(url): the session manager refused the client (error \(code): \(message))")
                case .open(let open):
                    return NSMSession(client: client, open: open, command: command)
                default:
                    continue
                }
            }
            if !announced && Date() > deadline {
                throw SamplerError("NSM_URL \(url): no answer from a session manager within 10 s")
            }
            if sigtimedwait(&signals, nil, &tick) > 0 { exit(0) }
        }
    }

    /// Runs `command` as a client of the session manager at `url`: joins, restores the kept
    /// options into a copy of it, and runs `body` with that copy; an error before or while it
    /// runs is told to the server as the open's failure (once) and thrown.
    static func run<C: SessionKeeping>(_ command: C, url: String, body: (C, NSMSession) throws -> Void) throws {
        let session = try join(url: url, command: C.sessionCommand)
        var restored = command
        try session.restore(&restored)
        do { try body(restored, session) } catch {
            session.failOpen(error)
            throw error
        }
    }

    /// Applies the state file's options to `command` when the file exists (a new client starts
    /// from the command line's values). A bad file is refused to the server and thrown.
    func restore<C: SessionKeeping>(_ command: inout C) throws {
        do {
            if let state = try SessionState.load(path: statePath) {
                guard state.command == C.sessionCommand else {
                    throw SamplerError("\(statePath): holds the state of `sampler \(state.command)`, not of `sampler \(C.sessionCommand)`")
                }
                try command.apply(sessionOptions: state.options, file: statePath)
                print("NSM: restored \(statePath)")
            }
        } catch {
            failOpen(error, code: .badProject)
            throw error is SessionStateError ? SamplerError("\(error)") : error
        }
        saved = command.sessionOptions
    }

    /// Tells the server the open failed (once, and only before it was answered).
    func failOpen(_ error: any Error, code: NSMProtocol.Code = .general) {
        guard !openAnswered else { return }
        openAnswered = true
        client.error(to: "/nsm/client/open", code: code, Sampler.message(for: error).split(separator: "\n").first.map(String.init) ?? "\(error)")
    }

    /// On `LivePlayback`'s tick: answers the open (the first tick comes once the JACK client
    /// runs), saves on `/nsm/client/save`, and reports dirty or clean. `current`: what a save
    /// would write now.
    ///
    /// `check` opens a copy of the command with a state as a reopen would, and throws what the
    /// reopen would refuse: such a state is not written (the save is answered with `/error`).
    func tick(current: () -> [String: SessionValue], check: ([String: SessionValue]) throws -> Void = { _ in }) -> Bool {
        if !openAnswered {
            openAnswered = true
            client.reply(to: "/nsm/client/open", "opened as \(open.clientID)")
            print("NSM: open as JACK client \(open.clientID), state in \(statePath)")
        }
        for event in client.take() {
            switch event {
            case .save:
                let state = current()
                do {
                    do { try check(state) } catch {
                        throw SamplerError("\(statePath): not saved: a reopen would refuse it: \(Sampler.message(for: error).prefix(300))")
                    }
                    try SessionState(command: command, options: state).write(to: statePath)
                    saved = state
                    client.reply(to: "/nsm/client/save", "saved")
                    print("NSM: saved \(statePath)")
                } catch {
                    client.error(to: "/nsm/client/save", code: .createFailed, "\(error)")
                    FileHandle.standardError.write(Data("sampler: warning: \(error)\n".utf8))
                }
            case .open:
                client.error(to: "/nsm/client/open", code: .general, "this client cannot switch to another session while running")
            case .failed(let path, let code, let message):
                FileHandle.standardError.write(Data("sampler: warning: the session manager answered \(path) with error \(code): \(message)\n".utf8))
            case .announced, .sessionIsLoaded, .ignored:
                continue
            }
        }
        client.report(dirty: current() != saved)
        return true
    }
}

/// Reading a state file's option values as a command's properties. Errors name the file and
/// the option.
struct SessionOptionReader {
    let file: String

    private func fail(_ key: String, _ expected: String, _ value: SessionValue) -> SamplerError {
        SamplerError("\(file): options.\(key): expected \(expected), got \(value)")
    }

    /// A string (a number is taken as written); nil for null.
    func text(_ key: String, _ value: SessionValue) throws -> String? {
        switch value {
        case .string(let s): s
        case .number(let n): formatNumber(n)
        case .unset: nil
        case .bool: throw fail(key, "a string", value)
        }
    }

    func requiredText(_ key: String, _ value: SessionValue) throws -> String {
        guard let s = try text(key, value) else { throw fail(key, "a string", value) }
        return s
    }

    /// A whole number; nil for null.
    func integer(_ key: String, _ value: SessionValue) throws -> Int? {
        switch value {
        case .number(let n) where n == n.rounded() && abs(n) < 1e9: Int(n)
        case .string(let s) where Int(s) != nil: Int(s)!
        case .unset: nil
        default: throw fail(key, "a whole number", value)
        }
    }

    func requiredInteger(_ key: String, _ value: SessionValue) throws -> Int {
        guard let n = try integer(key, value) else { throw fail(key, "a whole number", value) }
        return n
    }

    /// A finite number; nil for null.
    func number(_ key: String, _ value: SessionValue) throws -> Double? {
        switch value {
        case .number(let n) where n.isFinite: n
        case .string(let s) where Double(s)?.isFinite == true: Double(s)!
        case .unset: nil
        default: throw fail(key, "a number", value)
        }
    }

    func requiredNumber(_ key: String, _ value: SessionValue) throws -> Double {
        guard let n = try number(key, value) else { throw fail(key, "a number", value) }
        return n
    }

    /// true or false; nil for null.
    func flag(_ key: String, _ value: SessionValue) throws -> Bool? {
        switch value {
        case .bool(let b): b
        case .unset: nil
        default: throw fail(key, "true, false or null", value)
        }
    }

    /// The error for an option the command does not keep.
    func unknown(_ key: String, command: String, keeps: [String]) -> SamplerError {
        SamplerError("\(file): options.\(key): not an option `sampler \(command)` keeps (it keeps \(keeps.sorted().joined(separator: ", ")))")
    }

    /// The error for kept options that do not go together, from the command's `validate()`.
    func invalid(_ error: any Error) -> SamplerError {
        SamplerError("\(file): \(Sampler.message(for: error).split(separator: "\n").first.map(String.init) ?? "\(error)")")
    }
}

extension SessionValue {
    /// A file name, absolute (a session is launched from wherever the session manager runs).
    static func file(_ path: String?) -> SessionValue {
        guard let path else { return .unset }
        return .string(URL(fileURLWithPath: path).standardizedFileURL.path)
    }

    static func text(_ s: String?) -> SessionValue { s.map { .string($0) } ?? .unset }
    static func decimal(_ n: Double?) -> SessionValue { n.map { .number($0) } ?? .unset }
    static func integer(_ n: Int?) -> SessionValue { n.map { .number(Double($0)) } ?? .unset }
    static func flag(_ b: Bool?) -> SessionValue { b.map { .bool($0) } ?? .unset }
}
