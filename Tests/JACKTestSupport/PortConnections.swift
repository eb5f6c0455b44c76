import Foundation

extension JACKServer {
    /// Whether `port` is connected to `other` on this server within `timeout` seconds
    /// (`jack_lsp -c`). A client connects its ports once it is active: a sender waits for this
    /// before its first message, which would otherwise be lost, not late.
    public func waitUntilConnected(_ port: String, to other: String, timeout: Double = 20) -> Bool {
        let env = environment.merging(["JACK_DEFAULT_SERVER": name]) { mine, _ in mine }
        return waitUntil(timeout: timeout) {
            (try? runTool(URL(fileURLWithPath: "/usr/bin/jack_lsp"), ["-c", port], environment: env, timeout: 5))?.stdout.contains(other) == true
        }
    }
}
