import Foundation
import JACKTestSupport
import SamplerCore
import SamplerKit
import Testing

/// A `SamplerNode` on a `ManualDevice`: notes, controllers and bends land on their frames.
@Suite struct SamplerNodeTests {
    /// A mono float WAV of `samples` at 48 kHz.
    static func writeWAV(_ url: URL, _ samples: [Float]) throws {
        var data = [UInt8]()
        func u32(_ v: Int) { data += [UInt8(v & 0xFF), UInt8(v >> 8 & 0xFF), UInt8(v >> 16 & 0xFF), UInt8(v >> 24 & 0xFF)] }
        func u16(_ v: Int) { data += [UInt8(v & 0xFF), UInt8(v >> 8 & 0xFF)] }
        data += Array("RIFF".utf8); u32(36 + samples.count * 4); data += Array("WAVEfmt ".utf8)
        u32(16); u16(3); u16(1); u32(48000); u32(48000 * 4); u16(4); u16(32)
        data += Array("data".utf8); u32(samples.count * 4)
        for s in samples { withUnsafeBytes(of: s.bitPattern.littleEndian) { data += $0 } }
        try Data(data).write(to: url)
    }

    /// A kit: note 60 plays `low.wav` (0.25 throughout) while CC1 is below 64 and `high.wav`
    /// (0.5) from 64 on, panned hard left, its level following CC7 and its pitch the bend.
    static func kit() throws -> URL {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("samplernode-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        try writeWAV(dir.appendingPathComponent("low.wav"), [Float](repeating: 0.25, count: 48000))
        try writeWAV(dir.appendingPathComponent("high.wav"), (0..<48000).map { Float($0 % 100) / 200 })
        let sfz = """
            <global> key=60 pan=-100 bend_up=1200 bend_down=-1200
            <region> sample=low.wav hicc1=63
            <region> sample=high.wav locc1=64
            """
        let url = dir.appendingPathComponent("kit.sfz")
        try sfz.write(to: url, atomically: true, encoding: .utf8)
        return url
    }

    @Test func notesAndControllersPlayOnTheirFrames() throws {
        let device = ManualDevice(bufferSize: 256)
        let session = try AudioSession(device: device)
        defer { session.close() }
        let node = try SamplerNode(contentsOf: try Self.kit(), session: session)
        #expect(node.instrumentCount == 2)
        let t0 = device.nextFrame + 1024
        // CC1 below 64: the low sample, on its frame.
        #expect(node.startNote(60, withVelocity: 127, at: AudioTime(sampleTime: t0 + 100, atRate: 48000)))
        // CC7 from 100 to 50 on its frame: the level glides to × (50/100)² over 1 ms.
        #expect(node.sendController(7, withValue: 50, at: AudioTime(sampleTime: t0 + 1000, atRate: 48000)))
        #expect(node.stopNote(60, at: AudioTime(sampleTime: t0 + 1500, atRate: 48000)))
        // CC1 up: the next note is the high sample; a bend of an octave plays it twice as fast.
        #expect(node.sendController(1, withValue: 100, onChannel: 3, at: AudioTime(sampleTime: t0 + 2000, atRate: 48000)))
        #expect(node.sendController(7, withValue: 100, onChannel: 3, at: AudioTime(sampleTime: t0 + 2000, atRate: 48000)))
        #expect(node.startNote(60, withVelocity: 127, onChannel: 3, at: AudioTime(sampleTime: t0 + 3000, atRate: 48000)))
        #expect(node.sendPitchBend(16383, onChannel: 3, at: AudioTime(sampleTime: t0 + 3200, atRate: 48000)))
        #expect(node.sendProgramChange(5, at: AudioTime(sampleTime: t0 + 3300, atRate: 48000)))
        let start = device.nextFrame
        let out = device.render(periods: 24).left
        func at(_ frame: Frame) -> Float { out[Int(frame - start)] }
        #expect(at(t0 + 99) == 0)
        let level = at(t0 + 100)
        #expect(level > 0.1)
        #expect(abs(at(t0 + 999) - level) < 1e-6)
        #expect(abs(at(t0 + 1000) - level) < 1e-6)
        #expect(abs(at(t0 + 1024) / level - 0.625) < 1e-4)
        #expect(abs(at(t0 + 1048) / level - 0.25) < 1e-4)
        // The high sample is a ramp of period 100: its slope doubles with the bend.
        let slope = at(t0 + 3101) - at(t0 + 3100)
        let bent = at(t0 + 3251) - at(t0 + 3250)
        #expect(slope > 0 && abs(bent / slope - 2) < 1e-3)
        // The note-off released the first note (sfizz's default release, 1 ms).
        #expect(at(t0 + 2999) == 0)
        #expect(session.engine.programChangeCount == 1)
    }

    @Test func badMessagesAreRefusedAndOneNodeAtATime() throws {
        let device = ManualDevice(bufferSize: 256)
        let session = try AudioSession(device: device)
        defer { session.close() }
        let url = try Self.kit()
        var node: SamplerNode? = try SamplerNode(contentsOf: url, session: session)
        #expect(node?.startNote(128, withVelocity: 1) == false)
        #expect(node?.sendController(1, withValue: 1, onChannel: 16) == false)
        #expect(node?.sendPitchBend(16384) == false)
        #expect(node?.sendMIDIEvent(0xF8, 0) == false)
        #expect(throws: SamplerError.self) { _ = try SamplerNode(contentsOf: url, session: session) }
        node = nil
        // Once dropped, its slots and instruments are given back (when the event thread has
        // swapped them out and the render thread taken the swap): another loads.
        let renderer = ManualRenderer(device, keep: false)
        defer { renderer.stop() }
        var again: SamplerNode?
        let deadline = Date().addingTimeInterval(10)
        while again == nil, Date() < deadline {
            again = try? SamplerNode(contentsOf: url, session: session)
            if again == nil { usleep(2_000) }
        }
        #expect(again != nil)
        #expect(throws: SamplerError.self) {
            _ = try SamplerNode(contentsOf: url.deletingLastPathComponent().appendingPathComponent("missing.sfz"), session: session)
        }
    }

    /// A dropped node's notes waiting for later frames do not play on the next kit.
    @Test func aDroppedNodesWaitingNotesDoNotPlayOnTheNext() throws {
        let device = ManualDevice(bufferSize: 256)
        let session = try AudioSession(device: device)
        defer { session.close() }
        let url = try Self.kit()
        var node: SamplerNode? = try SamplerNode(contentsOf: url, session: session)
        let later = device.nextFrame + 48_000
        #expect(node?.startNote(60, withVelocity: 127, at: AudioTime(sampleTime: later, atRate: 48000)) == true)
        node = nil
        let renderer = ManualRenderer(device, keep: true)
        var again: SamplerNode?
        let deadline = Date().addingTimeInterval(10)
        while again == nil, Date() < deadline {
            again = try? SamplerNode(contentsOf: url, session: session)
            if again == nil { usleep(2_000) }
        }
        #expect(again != nil)
        #expect(waitUntil(timeout: 10) { device.nextFrame > later + 1024 })
        renderer.stop()
        #expect(renderer.nonZeroFrames(from: later - 256).count == 0)
    }
}
