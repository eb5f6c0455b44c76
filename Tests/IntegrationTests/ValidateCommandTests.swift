import Foundation
import JACKTestSupport
import SoundFiles
import Testing

/// `sampler validate` checks an SFZ instrument as `play --patch` reads it: the imported patch and
/// every sample it names, with the opcodes it does not carry listed; a bad one is one line
/// naming the file, never a JSON error.
@Suite struct ValidateCommandTests {
    @Test func anSFZInstrumentIsCheckedAsPlayReadsIt() throws {
        let dir = try temporaryDirectory()
        try WAVFileWriter.write(path: dir.appendingPathComponent("kick.wav").path,
                                channels: [[Float](repeating: 0.25, count: 4800)], sampleRate: 48000, format: .pcm16)
        let sfz = dir.appendingPathComponent("kit.sfz")
        try """
        <region> sample=kick.wav key=36
        <region> sample=kick.wav key=38 eq1_gain=3
        """.write(to: sfz, atomically: true, encoding: .utf8)
        let r = try runSampler(["validate", sfz.path], timeout: 20)
        #expect(r.status == 0, "\(r.stderr)")
        let lines = r.stdout.split(separator: "\n").map(String.init)
        #expect(lines.first?.hasPrefix("\(sfz.path): OK") == true, "\(r.stdout)")
        #expect(lines.contains { $0.contains("kick.wav (1 ch, 48000 Hz, 0.100 s)") }, "\(r.stdout)")
        #expect(lines.contains { $0.contains("note: ") && $0.contains("eq1_gain is not carried") }, "\(r.stdout)")
    }

    @Test func anSFZNamingAMissingSampleIsOneLineNamingIt() throws {
        let dir = try temporaryDirectory()
        let sfz = dir.appendingPathComponent("kit.sfz")
        try "<region> sample=missing.wav key=36\n".write(to: sfz, atomically: true, encoding: .utf8)
        let r = try runSampler(["validate", sfz.path], timeout: 20)
        #expect(r.status != 0)
        #expect(r.stderr.split(separator: "\n").count == 1, "\(r.stderr)")
        #expect(r.stderr.contains("missing.wav"), "\(r.stderr)")
        #expect(!r.stderr.contains("JSON"), "\(r.stderr)")
    }
}
