import ArgumentParser
import Foundation
@preconcurrency import Glibc

/// Who may reach the OSC port and what files its messages may name (`play` and `metronome`).
struct OSCAccessOptions: ParsableArguments {
    @Option(help: ArgumentHelp(
        "The address the OSC port listens on (default 127.0.0.1: this machine only).",
        discussion: "0.0.0.0 (or ::) opens it to every network the machine is on: anyone who can reach the port can then start, stop and load what this command line could, and read any file the process may read through /sampler/load or /klick/map/load_file unless --osc-root limits it.",
        valueName: "address"))
    var oscHost = "127.0.0.1"

    @Option(help: ArgumentHelp(
        "Messages may load files only from under this directory (symbolic links resolved).",
        valueName: "directory"))
    var oscRoot: String?

    /// Checks the values; `port` is the command's --osc-port.
    func validate(port: String?) throws {
        var v4 = in_addr(), v6 = in6_addr()
        if inet_pton(AF_INET, oscHost, &v4) != 1 && inet_pton(AF_INET6, oscHost, &v6) != 1 {
            throw ValidationError("--osc-host must be a numeric IPv4 or IPv6 address (127.0.0.1, 0.0.0.0, ::1), got \"\(oscHost)\"")
        }
        if port == nil && (oscHost != "127.0.0.1" || oscRoot != nil) {
            throw ValidationError("--osc-host and --osc-root need --osc-port")
        }
        if let oscRoot {
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: oscRoot, isDirectory: &isDirectory), isDirectory.boolValue else {
                throw ValidationError("--osc-root must be an existing directory, got \"\(oscRoot)\"")
            }
        }
    }
}
