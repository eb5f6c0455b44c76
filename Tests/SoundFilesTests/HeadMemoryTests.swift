import Foundation
import SamplerCore
import SoundFiles
import Testing

/// The memory of streamed samples' heads: carved from mappings, locked in memory once loaded
/// (or saying why not), unmapped with the last head.
struct HeadMemoryTests {
    /// This process's locked memory in kB (VmLck).
    func lockedKilobytes() -> Int {
        let status = (try? String(contentsOfFile: "/proc/self/status", encoding: .utf8)) ?? ""
        let line = status.split(separator: "\n").first { $0.hasPrefix("VmLck:") } ?? ""
        return Int(line.split(separator: " ").dropFirst().first ?? "0") ?? 0
    }

    @Test func headsAreKeptIntactLockedAndGoneWithTheLastOne() throws {
        let before = lockedKilobytes()
        var memory: HeadMemory? = HeadMemory()
        weak var gone = memory
        var sounds: [Sound] = []
        for i in 0..<600 {
            let left = (0..<8_193).map { Float(($0 + i) % 1000) / 1000 }
            sounds.append(try Sound(channels: i % 3 == 0 ? [left] : [left, left.map { -$0 }], sampleRate: 48_000, memory: memory))
        }
        let bytes = memory!.bytes
        #expect(bytes >= 600 * 8_193 * 4 && bytes <= 2 * 600 * 8_193 * 4 + (32 << 20))
        let (locked, error) = memory!.lock()
        if let error {
            // Without the privilege, a limit below the heads: what was not locked is said.
            #expect(locked < bytes && (error == ENOMEM || error == EPERM || error == EAGAIN))
        } else {
            #expect(locked == bytes)
            // AddressSanitizer's mlock does nothing (it reports success).
            if ProcessInfo.processInfo.environment["SAMPLER_SANITIZER"] != "address" {
                #expect(lockedKilobytes() - before >= bytes / 1024)
            }
        }
        for (i, sound) in sounds.enumerated() {
            #expect(Int(bitPattern: sound.left) % 64 == 0)
            #expect(sound.left[8_192] == Float((8_192 + i) % 1000) / 1000)
            if i % 3 != 0 { #expect(sound.right[8_192] == -sound.left[8_192]) }
        }
        memory = nil
        #expect(gone != nil, "the heads keep their memory")
        sounds.removeAll()
        #expect(gone == nil)
        #expect(lockedKilobytes() <= before + 4)
    }
}
