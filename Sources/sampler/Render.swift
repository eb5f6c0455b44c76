import DrumPlayer
import ArgumentParser
import Foundation
import ProgramHost
import SamplerCore

struct Render: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Render a patch offline to a WAV file, frame-identical to live playback."
    )

    @OptionGroup var patchOptions: PatchOptions

    @Option(help: "Seconds to render.")
    var duration: Double

    @Option(help: "The WAV file to write.")
    var out: String

    @Option(help: ArgumentHelp("Also write each named output (an instrument's \"output\") to DIR/NAME.wav, frame for frame beside the main mix (--out), which then holds the rest.",
                               valueName: "DIR"))
    var stems: String?

    @Option(help: "Sample rate in Hz.")
    var rate: Int = 48000

    @Option(help: "Sample format: float32, pcm24 or pcm16.")
    var format: String = "float32"

    func validate() throws {
        if !(duration > 0 && duration <= 24 * 3600) {
            throw ValidationError("--duration must be a number of seconds greater than 0 and at most 86400, got \(duration)")
        }
        if !(8000...384_000).contains(rate) { throw ValidationError("--rate must be between 8000 and 384000 Hz, got \(rate)") }
        if sampleFormat == nil { throw ValidationError("--format must be float32, pcm24 or pcm16, got \"\(format)\"") }
    }

    var sampleFormat: WAVSampleFormat? { WAVSampleFormat(option: format) }

    func run() throws {
        var program = try patchOptions.makeProgram()
        (program as? PatchProgram)?.showLoadProgress()
        let frames = Int((duration * Double(rate)).rounded())
        let started = Date()
        if let stems {
            let target = URL(fileURLWithPath: out).standardizedFileURL.path
            if let clash = program.outputNames.first(where: { URL(fileURLWithPath: "\(stems)/\($0).wav").standardizedFileURL.path == target }) {
                throw SamplerError("--stems: the stem of output \"\(clash)\" would be written over --out \(out)")
            }
            var isDirectory: ObjCBool = false
            if FileManager.default.fileExists(atPath: stems, isDirectory: &isDirectory) {
                if !isDirectory.boolValue { throw SamplerError("--stems: \(stems) is a file, not a directory") }
            } else if program.outputNames.isEmpty {
                throw SamplerError("--stems: \(program.title) names no outputs (an instrument's \"output\"), so there are no stems to write")
            } else {
                do { try FileManager.default.createDirectory(atPath: stems, withIntermediateDirectories: true) } catch {
                    throw SamplerError("--stems: cannot create the directory \(stems)")
                }
            }
        }
        let tails = try OfflineRenderer.render(&program, sampleRate: Double(rate), frameCount: frames, to: out, format: sampleFormat!, stems: stems)
        if tails.lateTails > 0 {
            FileHandle.standardError.write(Data("sampler: warning: \(tails.lateTails) voice(s) ended at their head's end, their tail not read from disk\n".utf8))
        }
        if tails.refusedTails > 0 {
            FileHandle.standardError.write(Data("sampler: warning: \(tails.refusedTails) note(s) not played, every voice that streams from disk busy (--stream-voices)\n".utf8))
        }
        let elapsed = Date().timeIntervalSince(started)
        print(String(format: "rendered %.2f s to %@ in %.3f s (%.0f× real time)", duration, out, elapsed,
                     duration / max(elapsed, 1e-9)))
        if let stems { print("stems: " + program.outputNames.map { "\(stems)/\($0).wav" }.joined(separator: ", ")) }
    }
}
