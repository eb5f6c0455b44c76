import Foundation
import JACKTestSupport
import Patches
import SamplerCore
@testable import DrumPlayer
import ProgramHost
import Scheduling
import SoundFiles
import Testing

@Suite struct TrimmedSampleTests {
    /// `offset` and `end` (frames of the file, `end` the last one played) cut the sample before
    /// it is resampled to the engine's rate.
    @Test func offsetAndEndCutTheFileAtItsOwnRate() throws {
        let dir = try temporaryDirectory()
        let path = dir.appendingPathComponent("ramp.wav").path
        try WAVFileWriter.write(path: path, channels: [(0..<1000).map { Float($0) / 1000 }], sampleRate: 48000)
        let same = try LoadedPatch.trimmed(SampleFile(path: path, resolvedPath: path, offset: 10, end: 99), sampleRate: 48000).0
        #expect(same.frameCount == 90)
        #expect(same.samples(channel: 0).first == Float(10) / 1000 && same.samples(channel: 0).last == Float(99) / 1000)
        let toEnd = try LoadedPatch.trimmed(SampleFile(path: path, resolvedPath: path, offset: 900), sampleRate: 48000).0
        #expect(toEnd.frameCount == 100)
        let resampled = try LoadedPatch.trimmed(SampleFile(path: path, resolvedPath: path, offset: 0, end: 479), sampleRate: 96000).0
        #expect(resampled.frameCount == 960)
        // A loop: the sound ends at the loop's last frame and goes on from its first.
        let (cut, native) = try LoadedPatch.trimmed(SampleFile(path: path, resolvedPath: path, offset: 100, loop: 300...499), sampleRate: 48000)
        let looped = LoadedPatch.looped(cut, loop: 300...499, offset: 100, nativeFrames: native)
        #expect(looped.frameCount == 400 && looped.loopStart == 200)
        #expect(looped.samples(channel: 0)[200] == Float(300) / 1000 && looped.samples(channel: 0).last == Float(499) / 1000)
        #expect(throws: (any Error).self) {
            try LoadedPatch.trimmed(SampleFile(path: path, resolvedPath: path, offset: 1000), sampleRate: 48000)
        }
    }
}
