import ArgumentParser
import Foundation
import Patches
import SFZ
import SamplerCore

struct ImportSFZ: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "import-sfz",
        abstract: "Convert an SFZ instrument (.sfz) into a version 2 patch.",
        discussion: """
        One instrument per MIDI note the SFZ file plays (a key range gives one per key, tuned by \
        pitch_keytrack), with its velocity layers (lovel/hivel), round robin (seq_length/seq_position) \
        or random choice (lorand/hirand), choke groups (group/off_by), voices (polyphony), level \
        (volume, amplitude), pan (sfizz's constant-power law), tuning and velocity curve \
        (amp_veltrack, amp_velcurve_N). The patch names the samples where they are (absolute paths) and \
        has one pattern, "audition", that plays each instrument in turn. Every opcode that is not \
        carried is listed once with its line (docs/sfz-and-midi.md has the table). \
        `sampler play --patch kit.sfz` and `sampler render --patch kit.sfz` read the SFZ file directly.
        """
    )

    @Argument(help: "The SFZ file.")
    var sfz: String

    @Option(help: "The patch file to write.")
    var out: String

    func run() throws {
        let result = try SFZImporter.importSFZ(path: sfz)
        // `importSFZ` has checked this text against the patch format.
        let text = result.patchJSON
        do { try text.write(toFile: out, atomically: true, encoding: .utf8) } catch {
            throw SamplerError("\(out): cannot write the patch (\(error.localizedDescription))")
        }
        result.notes.forEach { print("note: \($0)") }
        print("wrote \(out): \(result.kit.instruments.count) instruments from \(sfz)")
    }
}
