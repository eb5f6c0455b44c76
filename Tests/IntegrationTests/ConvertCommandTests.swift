import Foundation
import JACKTestSupport
import Testing

/// `sampler convert`: any patch written in the current format, rendering as the original.
@Suite struct ConvertCommandTests {
    @Test func aConvertedPatchValidatesAsVersionTwoAndRendersTheSameFile() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        for name in ["drums-v1.json", "drums.json"] {
            let original = packageRoot.appendingPathComponent("Patches/\(name)").path
            let converted = dir.appendingPathComponent("new-\(name)").path
            let c = try runSampler(["convert", original, "--out", converted])
            #expect(c.status == 0 && c.stdout.contains("wrote \(converted): version 2"), "\(c.stderr)")
            let v = try runSampler(["validate", converted])
            #expect(v.status == 0 && v.stdout.contains("OK: version 2"), "\(v.stderr)")
            var rendered: [Data] = []
            for patch in [original, converted] {
                let out = dir.appendingPathComponent(UUID().uuidString + ".wav").path
                let r = try runSampler(["render", "--patch", patch, "--duration", "4", "--out", out])
                #expect(r.status == 0, "\(r.stderr)")
                rendered.append(try Data(contentsOf: URL(fileURLWithPath: out)))
            }
            #expect(rendered[0].count > 700_000 && rendered[0] == rendered[1], "\(name): the converted patch renders differently")
        }
    }

    @Test func whatCannotBeConvertedIsNamed() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let out = dir.appendingPathComponent("x.json").path
        let missing = try runSampler(["convert", "/nonexistent/p.json", "--out", out])
        #expect(missing.status == 1 && missing.stderr == "sampler: error: /nonexistent/p.json: cannot read the file (no such file)\n")
        let bad = dir.appendingPathComponent("bad.json").path
        try #"{ "version": 1, "tempo": 120, "sounds": {}, "players": [] }"#.write(toFile: bad, atomically: true, encoding: .utf8)
        let empty = try runSampler(["convert", bad, "--out", out])
        #expect(empty.status == 1 && empty.stderr.contains("players: expected at least one player"), "\(empty.stderr)")
        #expect(!FileManager.default.fileExists(atPath: out))
        let unwritable = try runSampler(["convert", packageRoot.appendingPathComponent("Patches/drums.json").path,
                                         "--out", "/nonexistent/dir/x.json"])
        #expect(unwritable.status == 1 && unwritable.stderr.hasPrefix("sampler: error: /nonexistent/dir/x.json: cannot write the patch"),
                "\(unwritable.stderr)")
    }
}
