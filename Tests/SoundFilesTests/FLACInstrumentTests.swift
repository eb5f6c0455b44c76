import Foundation
@testable import SoundFiles
import Testing

/// A FLAC file's `smpl` chunk kept as an APPLICATION block "riff" (`flac
/// --keep-foreign-metadata`): its root key and first loop, as sfizz reads them; anything cut
/// short or malformed gives nothing.
@Suite struct FLACInstrumentTests {
    /// "fLaC", one metadata block (the last) of type APPLICATION holding a `smpl` chunk with
    /// unity note `note` and, with `loop`, one loop.
    func flac(note: Int, loop: ClosedRange<Int>?) -> [UInt8] {
        var smpl: [UInt8] = []
        func u32(_ v: Int) { smpl += [UInt8(v & 0xFF), UInt8(v >> 8 & 0xFF), UInt8(v >> 16 & 0xFF), UInt8(v >> 24 & 0xFF)] }
        for v in [0, 0, 20_833, note, 0, 0, 0, loop == nil ? 0 : 1, 0] { u32(v) }
        if let loop { for v in [0, 0, loop.lowerBound, loop.upperBound, 0, 0] { u32(v) } }
        let size = smpl.count
        let body = Array("riff".utf8) + Array("smpl".utf8) + [UInt8(size & 0xFF), UInt8(size >> 8 & 0xFF), 0, 0] + smpl
        return Array("fLaC".utf8) + [0x80 | 2, 0, UInt8(body.count >> 8), UInt8(body.count & 0xFF)] + body
    }

    func read(_ bytes: [UInt8]) -> (rootKey: Int?, loop: ClosedRange<Int>?) {
        bytes.withUnsafeBytes { SoundFileLoops.flacInstrument($0) }
    }

    @Test func theRootKeyAndLoopOfAFLACFilesSmplChunkAreRead() {
        let looped = read(flac(note: 57, loop: 100...199))
        #expect(looped.rootKey == 57 && looped.loop == 100...199)
        let plain = read(flac(note: 38, loop: nil))
        #expect(plain.rootKey == 38 && plain.loop == nil)
    }

    @Test func aFLACHeaderCutShortOrMalformedGivesNothing() {
        let whole = flac(note: 57, loop: 100...199)
        for n in [0, 3, 4, 7, 8, 20, whole.count - 1] {
            let cut = read(Array(whole.prefix(n)))
            #expect(cut.rootKey == nil && cut.loop == nil, "cut at \(n)")
        }
        var wrong = whole
        wrong[0] = UInt8(ascii: "R")
        #expect(read(wrong).rootKey == nil)
        // A note outside MIDI's range, a loop whose end is before its start.
        #expect(read(flac(note: 300, loop: nil)).rootKey == nil)
        #expect(read(flac(note: 60, loop: 200...200)).loop == 200...200)
        var backwards = flac(note: 60, loop: 0...0)
        let start = backwards.count - 24 + 8
        backwards[start] = 9
        #expect(read(backwards).loop == nil)
    }

    /// sfizz's FLAC file with root key 38 (from `sample_keycenter_embedded.sfz`), read from
    /// disk and from memory; a WAV file without an instrument chunk names none.
    @Test func aRealFLACFilesRootKeyIsReadFromDiskAndFromMemory() throws {
        let sfz = try String(contentsOf: URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Fixtures/sfizz/TestFiles/sample_keycenter_embedded.sfz"), encoding: .utf8)
        let start = try #require(sfz.range(of: "<sample> name=root_key_38.flac base64data="))
        let text = sfz[start.upperBound...].prefix { $0 != "<" }.filter { !$0.isWhitespace }
        let bytes = try #require(Data(base64Encoded: String(text)))
        #expect(SoundFileLoops.rootKey(bytes: [UInt8](bytes)) == 38)
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("flac-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let path = dir.appendingPathComponent("root.flac").path
        try bytes.write(to: URL(fileURLWithPath: path))
        #expect(SoundFileLoops.rootKey(path: path) == 38)
        #expect(SoundFileLoops.firstLoop(path: path) == nil)
        let wav = dir.appendingPathComponent("plain.wav").path
        try WAVFileWriter.write(path: wav, channels: [[0, 0.5, 0]], sampleRate: 48000)
        #expect(SoundFileLoops.rootKey(path: wav) == nil)
    }
}

