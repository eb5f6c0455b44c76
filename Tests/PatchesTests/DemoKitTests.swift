import Foundation
@testable import Patches
import Testing

@Suite struct DemoKitTests {
    @Test(arguments: ["drums.json", "shuffle.json"])
    func demoKitsDecodeAndUseOnlyTheProjectsSamples(name: String) throws {
        let path = packageRoot.appendingPathComponent("Patches/\(name)").path
        let kit = try PatchLoader.load(path: path)
        #expect(kit.version == 2)
        #expect(kit.song != nil && kit.patterns.count >= 2)
        let samples = packageRoot.appendingPathComponent("Samples").standardizedFileURL.path
        for file in kit.samplePaths {
            #expect(URL(fileURLWithPath: file.resolvedPath).deletingLastPathComponent().path == samples)
            #expect(FileManager.default.fileExists(atPath: file.resolvedPath), "\(file.resolvedPath) exists")
        }
        // The two hi-hats choke each other.
        let hats = kit.instruments.filter { $0.id.contains("hat") }
        #expect(hats.count == 2 && hats[0].chokeGroup != 0 && hats[0].chokeGroup == hats[1].chokeGroup)
    }

    @Test func theShuffleSwings() throws {
        let path = packageRoot.appendingPathComponent("Patches/shuffle.json").path
        let kit = try PatchLoader.load(path: path)
        #expect(kit.patterns.allSatisfy { $0.swing > 0 })
    }
}
