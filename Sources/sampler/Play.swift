import ArgumentParser
import Foundation
import SamplerKit

struct Play: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Play a patch live on a JACK server (the default command).",
        discussion: """
        Stops after --duration seconds, on Ctrl-C, or when the JACK server goes away. Note-ons on the \
        midi_in port play a version 2 patch's instruments, exactly one period after the frame they arrive on.
        """
    )

    @OptionGroup var patchOptions: PatchOptions

    @Option(help: "Stop after this many seconds (default: play until Ctrl-C).")
    var duration: Double?

    @Option(help: "JACK client name.")
    var name: String = "sampler"

    @Option(help: "JACK server name (default: $JACK_DEFAULT_SERVER or the default server).")
    var server: String?

    @Flag(help: "Do not connect the output ports to anything.")
    var noConnect = false

    @Option(help: "Connect out_L,out_R to these two ports (comma-separated) instead of the first physical outputs.")
    var connect: String?

    @Option(help: "Also write what is played to this WAV file (32-bit float).")
    var record: String?

    @Flag(help: "No status line.")
    var quiet = false

    func validate() throws {
        if let duration, !(duration > 0 && duration.isFinite) {
            throw ValidationError("--duration must be a positive number of seconds, got \(duration)")
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

    func run() throws {
        LivePlayback.blockTerminationSignals()
        let program = try patchOptions.makeProgram()
        var options = LivePlayback.Options()
        options.clientName = name
        options.serverName = server
        options.duration = duration
        options.recordPath = record
        options.showStatus = !quiet && isatty(STDOUT_FILENO) != 0
        if noConnect { options.connections = [] }
        if let connect { options.connections = connect.split(separator: ",").map(String.init) }
        let playback = LivePlayback(program: program, options: options)
        let summary: LivePlayback.Summary
        do {
            summary = try playback.run { print($0) }
        } catch {
            throw SamplerError("\(error)")
        }
        if summary.serverShutDown {
            throw SamplerError("the JACK server shut down; stopped after \(String(format: "%.2f", summary.renderedSeconds)) s")
        }
        print(String(format: "played %.2f s: %d starts, %d late, %d xruns", summary.renderedSeconds,
                     summary.startsSent, summary.lateStarts, summary.xruns))
    }
}
