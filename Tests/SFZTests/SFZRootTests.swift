import Foundation
import Testing
@testable import SFZ

/// An SFZ file loaded under a root (`/sampler/load` with `--osc-root`): nothing outside the
/// root is searched or read, and every sample that is not a file under it refuses the kit with
/// one answer, whether anything outside exists or not (a link in the root leading out, to a
/// file or to nothing, answers as a path outside it does).
@Suite struct SFZRootTests {
    @Test func aKitLoadedUnderARootAnswersAlikeForEverythingOutsideIt() throws {
        let top = FileManager.default.temporaryDirectory.appendingPathComponent("sfz-root-\(UUID().uuidString)").path
        let root = top + "/root"
        try FileManager.default.createDirectory(atPath: root + "/sub", withIntermediateDirectories: true)
        for file in [root + "/inside.wav", root + "/sub/deep.wav", top + "/outside.wav"] {
            FileManager.default.createFile(atPath: file, contents: Data())
        }
        try FileManager.default.createSymbolicLink(atPath: root + "/there.wav", withDestinationPath: top + "/outside.wav")
        try FileManager.default.createSymbolicLink(atPath: root + "/nowhere.wav", withDestinationPath: top + "/gone.wav")
        try FileManager.default.createSymbolicLink(atPath: root + "/out", withDestinationPath: top)
        func load(_ sample: String) throws -> SFZImporter.Result {
            let text = "<region> sample=inside.wav key=35\n<region> sample=\(sample) key=36\n"
            return try SFZImporter.importSFZ(bytes: Array(text.utf8), path: root + "/kit.sfz", root: root)
        }
        for sample in ["there.wav", "nowhere.wav", "THERE.WAV", "NOWHERE.WAV", "../outside.wav", "../gone.wav", "out/outside.wav",
                       "out/gone.wav", top + "/outside.wav", top + "/gone.wav", "nodir/x.wav"] {
            #expect(throws: SFZImporter.SampleOutsideRoot.self, "sample=\(sample)") { try load(sample) }
        }
        // Within it: found under another letter case, in a subdirectory, or missing (left out,
        // as sfizz leaves it).
        #expect(try load("INSIDE.WAV").kit.instruments.count == 2)
        #expect(try load("sub/DEEP.wav").kit.instruments.count == 2)
        let missing = try load("missing.wav")
        #expect(missing.kit.instruments.count == 1)
        #expect(missing.notes.contains { $0.contains("missing.wav") })
        // Includes are held to the root too.
        try "<region> sample=inside.wav key=40".write(toFile: top + "/outside.sfzh", atomically: true, encoding: .utf8)
        #expect(throws: (any Error).self) {
            try SFZImporter.importSFZ(bytes: Array("#include \"../outside.sfzh\"\n".utf8), path: root + "/kit.sfz", root: root)
        }
    }
}
