import ArgumentParser
import ProgramHost

/// The JACK connection options `sampler play` and `sampler metronome` share.
struct JACKOptions: ParsableArguments {
    @Option(help: "JACK client name.")
    var name: String = "sampler"

    @Option(help: "JACK server name (default: $JACK_DEFAULT_SERVER or the default server).")
    var server: String?

    @Flag(help: "Do not connect the output ports to anything.")
    var noConnect = false

    @Option(help: "Connect out_L,out_R to these two ports (comma-separated) instead of the first physical outputs.")
    var connect: String?

    @Option(help: ArgumentHelp("Connect a named output's NAME_L,NAME_R (an instrument's \"output\" in the patch) to one or two ports; repeat for each output.",
                               valueName: "NAME=PORT[,PORT]"))
    var connectOutput: [String] = []

    /// `--connect-output` as output name → ports.
    var outputConnections: [(output: String, ports: [String])] {
        connectOutput.compactMap { value in
            guard let eq = value.firstIndex(of: "=") else { return nil }
            return (String(value[..<eq]), value[value.index(after: eq)...].split(separator: ",").map(String.init))
        }
    }

    func validate() throws {
        for value in connectOutput {
            guard let eq = value.firstIndex(of: "="), eq != value.startIndex else {
                throw ValidationError("--connect-output expects NAME=PORT[,PORT], e.g. kick=system:playback_3,system:playback_4, got \"\(value)\"")
            }
            let ports = value[value.index(after: eq)...].split(separator: ",", omittingEmptySubsequences: false)
            if ports.isEmpty || ports.count > 2 || ports.contains(where: \.isEmpty) {
                throw ValidationError("--connect-output expects one or two port names after NAME=, e.g. kick=system:playback_3,system:playback_4, got \"\(value)\"")
            }
        }
        if noConnect && connect != nil { throw ValidationError("--no-connect and --connect cannot be used together") }
        if let connect {
            let ports = connect.split(separator: ",")
            if ports.isEmpty || ports.count > 2 {
                throw ValidationError("--connect expects one or two port names separated by a comma, e.g. system:playback_1,system:playback_2")
            }
        }
        if name.isEmpty { throw ValidationError("--name must not be empty") }
    }

    /// Sets the client, server and connections of `options`.
    func apply(to options: inout LivePlayback.Options) {
        options.clientName = name
        options.serverName = server
        if noConnect { options.connections = [] }
        if let connect { options.connections = connect.split(separator: ",").map(String.init) }
        options.outputConnections = outputConnections
    }
}
