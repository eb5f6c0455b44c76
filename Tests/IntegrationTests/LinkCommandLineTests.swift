import Foundation
import JACKTestSupport
import SamplerKit
import Sync
import SoundFiles
import Testing

/// What `--link` refuses, each in one line before any JACK client opens.
struct LinkCommandLineTests {
    @Test(arguments: [
        (["--map", "song.map"], "--map"), (["80-120/10"], "a speed trainer tempo"), (["--count-in", "1"], "--count-in"),
        (["--bars", "4"], "--bars"), (["--transport", "follow"], "--transport"), (["--midi-clock"], "--midi-clock"),
        (["--render", "x.wav", "--duration", "1"], "--render"),
    ])
    func linkRefusesWhatItCannotFollow(arguments: [String], name: String) throws {
        let run = try BackgroundProgram(productsDirectory.appendingPathComponent("sampler"), ["metronome", "--link"] + arguments,
                                        timeout: 10).finish()
        #expect(run.status != 0)
        #expect(run.output.contains("--link follows the session's one tempo from its start: leave out \(name)"), "\(run.output)")
        #expect(run.output.split(separator: "\n").count <= 2, "\(run.output)")
    }
}
