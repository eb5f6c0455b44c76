import ArgumentParser
@preconcurrency import Glibc
import Foundation

struct Sampler: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sampler",
        abstract: "A sample-exact sampler and metronome for JACK.",
        subcommands: [Play.self, Render.self, Validate.self, Convert.self, Metronome.self, ImportHydrogen.self, ImportSFZ.self],
        defaultSubcommand: Play.self
    )
}

/// Runs the command line. Errors are reported as one line on stderr ("sampler: error: …") with a
/// non-zero exit: 64 for a bad command line, 1 for anything that went wrong while working.
@main
enum Main {
    static func main() {
        // Line-buffered even into a pipe, so a supervisor sees each line when it is printed.
        setvbuf(stdout, nil, _IOLBF, 0)
        do {
            var command = try Sampler.parseAsRoot()
            try command.run()
        } catch {
            let code = Sampler.exitCode(for: error)
            if code == .success {
                // --help and the like.
                print(Sampler.fullMessage(for: error))
                exit(0)
            }
            let message = Sampler.message(for: error).split(separator: "\n").first.map(String.init) ?? "\(error)"
            FileHandle.standardError.write("sampler: error: \(message)\n".data(using: .utf8)!)
            exit(code.rawValue)
        }
    }
}
