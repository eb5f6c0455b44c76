import Foundation
import SamplerCore
import SoundFiles
import Testing

struct HugePageSampleMemoryTests {
    @Test func samplesAreAlignedKeptIntactAndTheArenasGoBackWhenEverySoundIsFreed() throws {
        let memory = HugePageSampleMemory()
        var sounds: [Sound] = []
        for i in 0..<300 {
            let frames = 1 + (i * 7919) % 50_000
            let left = (0..<frames).map { Float($0 % 1000) / 1000 + Float(i) }
            let channels = i % 2 == 0 ? [left] : [left, left.map { -$0 }]
            sounds.append(try Sound(channels: channels, sampleRate: 48_000, memory: memory))
        }
        // One sound larger than an arena gets its own.
        sounds.append(try Sound(channels: [[Float](repeating: 0.25, count: 9_000_000)], sampleRate: 48_000, memory: memory))
        #expect(memory.mappedBytes >= 36 << 20)
        for (i, sound) in sounds.enumerated() {
            #expect(Int(bitPattern: sound.left) % 64 == 0 && Int(bitPattern: sound.right) % 64 == 0)
            if i < 300 {
                let frames = 1 + (i * 7919) % 50_000
                #expect(sound.frameCount == frames)
                #expect(sound.left[frames - 1] == Float((frames - 1) % 1000) / 1000 + Float(i))
                if i % 2 == 1 { #expect(sound.right[frames - 1] == -sound.left[frames - 1]) }
            }
        }
        sounds.removeAll()
        #expect(memory.mappedBytes == 0)
    }

    @Test func freeingSoundsBetweenLiveOnesKeepsTheLiveOnesIntact() throws {
        let memory = HugePageSampleMemory()
        var keep: [Sound] = []
        for round in 0..<6 {
            keep.append(try Sound(channels: [[Float](repeating: Float(round), count: 1000)], sampleRate: 48_000, memory: memory))
            // 8 MB freed at once, between the kept sounds: its pages go back to the system.
            _ = try Sound(channels: [[Float](repeating: 0.5, count: 2 << 20)], sampleRate: 48_000, memory: memory)
        }
        for (round, sound) in keep.enumerated() {
            #expect(sound.samples(channel: 0).allSatisfy { $0 == Float(round) })
        }
        let fresh = try Sound(channels: [[Float](repeating: 0.25, count: 5000)], sampleRate: 48_000, memory: memory)
        #expect(fresh.samples(channel: 0).allSatisfy { $0 == 0.25 })
    }

    /// Where the kernel offers transparent huge pages, a big sound's samples are on them.
    @Test(.enabled(if: transparentHugePagesAreOn, "transparent huge pages are off on this machine"))
    func aBigSoundIsOnHugePagesWhereTheKernelOffersThem() throws {
        let memory = HugePageSampleMemory()
        let sound = try Sound(channels: [[Float](repeating: 0.5, count: 8 << 20)], sampleRate: 48_000, memory: memory)
        let start = UInt(bitPattern: Int(bitPattern: sound.left))
        // The mapping that holds the samples, in /proc/self/smaps: its AnonHugePages.
        // (Read to the end: String(contentsOfFile:) stops after the first page of a /proc file.)
        let handle = try #require(FileHandle(forReadingAtPath: "/proc/self/smaps"))
        let smaps = String(decoding: try handle.readToEnd() ?? Data(), as: UTF8.self)
        var inRange = false, hugeKB = 0, block = ""
        for line in smaps.split(separator: "\n") {
            if inRange { block += line + "\n" }
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            if let range = fields.first, range.contains("-"), !range.hasSuffix(":") {
                let bounds = range.split(separator: "-").compactMap { UInt($0, radix: 16) }
                inRange = bounds.count == 2 && bounds[0] <= start && start < bounds[1]
            } else if inRange, fields.first == "AnonHugePages:", let kb = Int(fields[1]) {
                hugeKB = kb
            }
        }
        #expect(hugeKB >= 16 << 10, "32 MB of samples at \(String(start, radix: 16)), \(hugeKB) kB on huge pages: \(block)")
        withExtendedLifetime(sound) {}
    }
}

let transparentHugePagesAreOn: Bool = {
    let mode = (try? String(contentsOfFile: "/sys/kernel/mm/transparent_hugepage/enabled", encoding: .utf8)) ?? ""
    return !mode.isEmpty && !mode.contains("[never]")
}()
