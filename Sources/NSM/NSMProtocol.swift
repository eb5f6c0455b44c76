import Sync

/// What `/nsm/client/open` asks for.
package struct NSMOpen: Equatable, Sendable {
    /// Where the client keeps its state: a path without extension, in the session's directory.
    package var path: String
    package var displayName: String
    /// The client's id: its JACK client name.
    package var clientID: String

    package init(path: String, displayName: String, clientID: String) {
        self.path = path
        self.displayName = displayName
        self.clientID = clientID
    }
}

/// A message from the session manager, as the client acts on it.
package enum NSMEvent: Equatable, Sendable {
    /// `/reply "/nsm/server/announce" message server_name capabilities`.
    case announced(message: String, serverName: String, capabilities: String)
    /// `/error path code message`: the server refused what the client sent to `path`.
    case failed(path: String, code: Int32, message: String)
    case open(NSMOpen)
    case save
    /// `/nsm/client/session_is_loaded`: every client of the session has opened.
    case sessionIsLoaded
    /// Anything else (its path and types): not part of what this client announced.
    case ignored(String)
}

/// The NSM API 1.1 as this client speaks it (https://new-session-manager.jackaudio.org/api/):
/// the messages it sends and what the messages it receives mean. Pure; `NSMClient` carries them.
package enum NSMProtocol {
    package static let apiMajor: Int32 = 1
    package static let apiMinor: Int32 = 1

    /// The error codes of the API this client sends.
    package enum Code: Int32, Sendable {
        case general = -1
        case launchFailed = -4
        case noSuchFile = -5
        case badProject = -9
        case createFailed = -10
    }

    /// `/nsm/server/announce s:application_name s:capabilities s:executable_name i:major i:minor i:pid`.
    package static func announce(applicationName: String, capabilities: [String], executable: String,
                                 pid: Int32) -> (path: String, arguments: [OSCArgument]) {
        let caps = capabilities.isEmpty ? "" : ":" + capabilities.joined(separator: ":") + ":"
        return ("/nsm/server/announce", [.string(applicationName), .string(caps), .string(executable),
                                         .int(apiMajor), .int(apiMinor), .int(pid)])
    }

    /// `/reply s:path s:message`: what the client did that the server asked for.
    package static func reply(to path: String, _ message: String) -> (path: String, arguments: [OSCArgument]) {
        ("/reply", [.string(path), .string(message)])
    }

    /// `/error s:path i:code s:message`.
    package static func error(to path: String, code: Code, _ message: String) -> (path: String, arguments: [OSCArgument]) {
        ("/error", [.string(path), .int(code.rawValue), .string(message)])
    }

    /// `/nsm/client/is_dirty` or `/nsm/client/is_clean` (no arguments).
    package static func dirty(_ dirty: Bool) -> (path: String, arguments: [OSCArgument]) {
        (dirty ? "/nsm/client/is_dirty" : "/nsm/client/is_clean", [])
    }

    /// What a message from the server means.
    package static func event(_ m: OSCMessage) -> NSMEvent {
        let a = m.arguments
        switch (m.path, m.types) {
        case ("/reply", let types) where types.hasPrefix("s") && types.allSatisfy { $0 == "s" } && a[0].text == "/nsm/server/announce":
            return .announced(message: a.count > 1 ? a[1].text! : "", serverName: a.count > 2 ? a[2].text! : "",
                              capabilities: a.count > 3 ? a[3].text! : "")
        case ("/error", "sis"):
            guard case .int(let code) = a[1] else { break }
            return .failed(path: a[0].text!, code: code, message: a[2].text!)
        case ("/nsm/client/open", "sss"):
            return .open(NSMOpen(path: a[0].text!, displayName: a[1].text!, clientID: a[2].text!))
        case ("/nsm/client/save", ""):
            return .save
        case ("/nsm/client/session_is_loaded", ""):
            return .sessionIsLoaded
        default:
            break
        }
        return .ignored("\(m.path) ,\(m.types)")
    }
}
