import SamplerCore
import SoundFiles

extension OfflineRenderer {
    /// Renders `frameCount` frames of `program` at `sampleRate` to the WAV file at `path`, on the
    /// same engine and commands as live playback from origin 0. Control thread only; blocks while
    /// it renders.
    ///
    /// With `stems` (a directory), each of the program's outputs besides the main mix
    /// (`LiveProgram.outputNames`) is written to `stems/NAME.wav` as well, frame for frame
    /// beside the main mix, which then holds only what is not routed away from it.
    /// Renders `program` to `path` (and its outputs' stems); returns the engine's counts of
    /// voices whose streamed tail was not read in time and of notes refused for want of a tail
    /// buffer (both 0 unless the program streams tails: an offline render reads every tail in
    /// time, and refuses notes only beyond the streaming voices).
    @discardableResult
    package static func render(_ program: inout any LiveProgram, sampleRate: Double, frameCount: Int,
                              to path: String, format: WAVSampleFormat, stems: String? = nil) throws -> (lateTails: Int, refusedTails: Int) {
        let engine = Engine(configuration: program.engineConfiguration)
        let counts = { (engine.tailUnderrunCount, engine.refusedTailCount) }
        try program.prepare(engine: engine, sampleRate: sampleRate)
        var feeder: CommandFeeder? = program.makeFeeder(origin: 0)
        let renderer = OfflineRenderer(engine: engine, sampleRate: sampleRate)
        guard let stems else {
            do {
                try renderer.renderToFile(path: path, frameCount: frameCount, feeder: &feeder, format: format)
            } catch {
                throw SamplerError("\(error)")
            }
            return counts()
        }
        let names = program.outputNames
        guard !names.isEmpty else {
            throw SamplerError("--stems: \(program.title) names no outputs (an instrument's \"output\"), so there are no stems to write")
        }
        do {
            let writers = try ([path] + names.map { "\(stems)/\($0).wav" }).map {
                try WAVFileWriter(path: $0, sampleRate: Int(sampleRate), channelCount: 2, format: format)
            }
            try renderer.render(frameCount: frameCount, outputCount: writers.count, feeder: &feeder) { buffers, n in
                for (k, writer) in writers.enumerated() {
                    try writer.write(left: buffers[2 * k], right: buffers[2 * k + 1], frameCount: n)
                }
            }
            for writer in writers { writer.close() }
        } catch {
            throw SamplerError("\(error)")
        }
        return counts()
    }
}
