import CJACK
import Foundation
import Locking

/// A connection made or broken between two ports, by anyone.
public struct RouteChange: Equatable, Sendable {
    public var source: String
    public var destination: String
    public var connected: Bool
}

/// Collects connection and port-registration notifications from JACK's notification thread for
/// the control side.
///
/// `@unchecked Sendable` by contract: `changes` and `registeredPorts` are `Locked`; `client` is
/// written by the control thread only before the port callbacks are installed (`JACKClient.init`)
/// and after `jack_client_close` has returned (`close`), never while the notification thread reads it.
final class RouteLog: @unchecked Sendable {
    let changes = Locked<[RouteChange]>([])
    let registeredPorts = Locked<[String]>([])
    var client: OpaquePointer?
}

let portConnectCallback: JackPortConnectCallback = { a, b, connect, arg in
    let log = Unmanaged<RouteLog>.fromOpaque(arg!).takeUnretainedValue()
    guard let client = log.client, let pa = jack_port_by_id(client, a), let pb = jack_port_by_id(client, b) else { return }
    let change = RouteChange(source: String(cString: jack_port_name(pa)), destination: String(cString: jack_port_name(pb)),
                             connected: connect != 0)
    log.changes.withLock { $0.append(change) }
}

let portRegistrationCallback: JackPortRegistrationCallback = { id, registered, arg in
    let log = Unmanaged<RouteLog>.fromOpaque(arg!).takeUnretainedValue()
    guard registered != 0, let client = log.client, let port = jack_port_by_id(client, id) else { return }
    let name = String(cString: jack_port_name(port))
    log.registeredPorts.withLock { $0.append(name) }
}

extension JACKClient {
    /// Connections made or broken since the last call (by this or any other program), oldest first.
    /// Control thread only.
    package func takeRouteChanges() -> [RouteChange] {
        routeLog.changes.withLock { changes in
            defer { changes.removeAll() }
            return changes
        }
    }

    /// Ports that appeared since the last call. Control thread only.
    package func takeRegisteredPorts() -> [String] {
        routeLog.registeredPorts.withLock { ports in
            defer { ports.removeAll() }
            return ports
        }
    }

    /// Whether `source` is connected to `destination` now.
    package func isConnected(_ source: String, to destination: String) -> Bool {
        guard let client = handle, let port = jack_port_by_name(client, source) else { return false }
        return jack_port_connected_to(port, destination) != 0
    }
}
