import ArgumentParser

@main
struct Sampler: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sampler",
        abstract: "A sample-exact sampler and metronome for JACK.",
        subcommands: [Play.self, Render.self, Validate.self],
        defaultSubcommand: Play.self
    )
}
