/// Why talking to the JACK server failed, in words a user can act on.
package enum JACKError: Error, Equatable, CustomStringConvertible {
    case serverNotRunning(server: String?)
    case clientOpenFailed(status: UInt32)
    case portRegistrationFailed(String)
    case activationFailed
    case connectFailed(from: String, to: String)
    case noSuchPort(String)
    /// The exact name was asked for (a session manager's client id) and another client has it.
    case nameTaken(String)

    package var description: String {
        switch self {
        case .serverNotRunning(let server):
            let name = server.map { "\"\($0)\"" } ?? "(default)"
            return "no JACK server \(name) is running: start one (e.g. `jackd -d alsa` for a sound card, or `jackd -n \(server ?? "default") -d dummy` without one), or use `make run`, which starts a private dummy server"
        case .clientOpenFailed(let status):
            return "could not open a JACK client (jack_status_t 0x\(String(status, radix: 16)))"
        case .portRegistrationFailed(let name): return "could not register JACK port \(name)"
        case .activationFailed: return "could not activate the JACK client"
        case .connectFailed(let from, let to): return "could not connect \(from) to \(to)"
        case .noSuchPort(let name): return "no JACK port named \"\(name)\" (list them with jack_lsp)"
        case .nameTaken(let name): return "the JACK client name \"\(name)\" is taken by another client, or refused by the server (jack_lsp lists the clients)"
        }
    }
}
