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

    /// A program that loads and drops sounds for hours (the soak reloads its patch every 10 s)
    /// keeps no page of what it dropped: not the pages two freed sounds shared, not a huge page
    /// around a few live kilobytes.
    @Test func droppedSoundsLeaveNoPageBehindAndASmallSoundTakesNoHugePage() throws {
        let memory = HugePageSampleMemory()
        var previous = [try Sound(channels: [[Float](repeating: 0.5, count: 25_000)], sampleRate: 48_000, memory: memory)]
        let base = UnsafeMutableRawPointer(mutating: previous[0].left)
        // 100 kB of samples written: about 25 pages in memory, not a 2 MB page.
        #expect(residentPages(base, 2 << 20) <= 26)
        for round in 0..<40 {
            // A "patch" of odd-sized sounds, loaded while the last one plays, then the last dropped.
            let patch = try (0..<5).map { i in
                try Sound(channels: [[Float](repeating: Float(round), count: 3001 + 997 * i)], sampleRate: 48_000, memory: memory)
            }
            previous = patch
        }
        let live = UnsafeMutableRawPointer(mutating: previous[0].left)
        let dead = (live - base) & ~4095
        #expect(dead > 1 << 20)
        #expect(residentPages(base, dead) == 0, "pages of dropped sounds still in memory")
        for (i, sound) in previous.enumerated() {
            #expect(sound.frameCount == 3001 + 997 * i && sound.samples(channel: 0).allSatisfy { $0 == 39 })
        }
    }

    /// Where the kernel offers transparent huge pages, a big sound's samples are on them.
    @Test(.enabled(if: transparentHugePagesAreOn, "transparent huge pages are off on this machine"))
    func aBigSoundIsOnHugePagesWhereTheKernelOffersThem() throws {
        let memory = HugePageSampleMemory()
        let sound = try Sound(channels: [[Float](repeating: 0.5, count: 8 << 20)], sampleRate: 48_000, memory: memory)
        let (hugeKB, block) = try hugePageKilobytes(at: sound.left)
        #expect(hugeKB >= 16 << 10, "32 MB of samples, \(hugeKB) kB on huge pages: \(block)")
        withExtendedLifetime(sound) {}
    }

    /// A kit of many small sounds is on huge pages too, where it fills them.
    @Test(.enabled(if: transparentHugePagesAreOn, "transparent huge pages are off on this machine"))
    func aKitOfSmallSoundsIsOnHugePagesWhereItFillsThem() throws {
        let memory = HugePageSampleMemory()
        let kit = try (0..<60).map { i in
            try Sound(channels: [[Float](repeating: Float(i), count: 25_000 + i)], sampleRate: 48_000, memory: memory)
        }
        let (hugeKB, block) = try hugePageKilobytes(at: kit[0].left)
        #expect(hugeKB >= 4 << 10, "6 MB of samples in 60 sounds, \(hugeKB) kB on huge pages: \(block)")
        withExtendedLifetime(kit) {}
    }
}

/// The AnonHugePages of the mapping that holds `address`, in /proc/self/smaps, and its lines.
/// (Read to the end: String(contentsOfFile:) stops after the first page of a /proc file.)
func hugePageKilobytes(at address: UnsafePointer<Float>) throws -> (Int, String) {
    let start = UInt(bitPattern: Int(bitPattern: address))
    let handle = try #require(FileHandle(forReadingAtPath: "/proc/self/smaps"))
    let smaps = String(decoding: try handle.readToEnd() ?? Data(), as: UTF8.self)
    var inRange = false, hugeKB = 0, block = ""
    for line in smaps.split(separator: "\n") {
        let fields = line.split(separator: " ", omittingEmptySubsequences: true)
        if let range = fields.first, range.contains("-"), !range.hasSuffix(":") {
            let bounds = range.split(separator: "-").compactMap { UInt($0, radix: 16) }
            inRange = bounds.count == 2 && bounds[0] <= start && start < bounds[1]
        } else if inRange, fields.first == "AnonHugePages:", let kb = Int(fields[1]) {
            hugeKB = kb
        }
        if inRange { block += line + "\n" }
    }
    return (hugeKB, block)
}

let transparentHugePagesAreOn: Bool = {
    let mode = (try? String(contentsOfFile: "/sys/kernel/mm/transparent_hugepage/enabled", encoding: .utf8)) ?? ""
    return !mode.isEmpty && !mode.contains("[never]")
}()

/// How many of the pages in `length` bytes at `address` (page-aligned) are in memory (`mincore`).
func residentPages(_ address: UnsafeMutableRawPointer, _ length: Int) -> Int {
    var vector = [UInt8](repeating: 0, count: (length + 4095) / 4096)
    guard mincore(address, length, &vector) == 0 else { return -1 }
    return vector.filter { $0 & 1 != 0 }.count
}
