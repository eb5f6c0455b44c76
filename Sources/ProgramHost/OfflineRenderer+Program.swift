import SamplerCore

extension OfflineRenderer {
    /// Renders `frameCount` frames of `program` at `sampleRate` to the WAV file at `path`, on the
    /// same engine and commands as live playback from origin 0. Control thread only; blocks while
    /// it renders.
    package static func render(_ program: inout any LiveProgram, sampleRate: Double, frameCount: Int,
                              to path: String, format: WAVSampleFormat) throws {
        let engine = Engine(configuration: .init(maxPlayers: max(program.playerCount, 1)))
        try program.prepare(engine: engine, sampleRate: sampleRate)
        var feeder: CommandFeeder? = program.makeFeeder(origin: 0)
        let renderer = OfflineRenderer(engine: engine, sampleRate: sampleRate)
        do {
            try renderer.renderToFile(path: path, frameCount: frameCount, feeder: &feeder, format: format)
        } catch {
            throw SamplerError("\(error)")
        }
    }
}
