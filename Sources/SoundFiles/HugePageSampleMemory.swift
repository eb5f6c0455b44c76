import Glibc
import SamplerCore
import Locking

/// Sample memory on 2 MB pages where the kernel allows it, so that thousands of voices reading
/// thousands of sounds do not each start a period with a TLB miss (in a VM, a nested page walk).
/// Samples are carved one after another, at 64-byte alignment, from 2 MB-aligned arenas (`mmap`).
///
/// Only memory that is all in use goes on huge pages: an arena starts on ordinary pages
/// (`MADV_NOHUGEPAGE`), and each 2 MB range that sounds have filled completely, with none of them
/// freed yet, is moved to a huge page (`MADV_HUGEPAGE`, then `MADV_COLLAPSE` where the kernel has
/// it, Linux 6.1 on; before that the kernel's `khugepaged` does it in the background). So the
/// unfilled end of an arena never holds a 2 MB page for a few kilobytes of samples.
///
/// Freeing gives memory back at once: a freed sound's pages go back to the system
/// (`MADV_DONTNEED`), together with every page it shared only with sounds freed before it, so a
/// program that loads and drops sounds for hours (a patch reloaded every few seconds) does not
/// keep one page per freed sound. The freed space is not reused (sounds are loaded once and live
/// long); an arena is unmapped when every sound in it is freed. Where huge pages are off, this is
/// ordinary memory.
///
/// Every sound the loaders decode lives here. Thread-safe (a mutex); control threads only.
///
/// `@unchecked Sendable` by contract: its only mutable state, the arena list, is `Locked` (`arenas`),
/// and the mappings are created, advised, trimmed and released only with that lock held.
package final class HugePageSampleMemory: SampleMemory, @unchecked Sendable {
    /// The one instance the loaders use.
    package static let shared = HugePageSampleMemory()

    static let hugePage = 2 << 20
    static let page = 4096
    /// Arenas are at least this big; a larger sound gets an arena of its own size.
    static let arenaSize = 32 << 20
    /// `MADV_COLLAPSE` (Linux 6.1): back a range with huge pages now. Older kernels refuse it.
    static let adviceCollapse: Int32 = 25

    /// One sound's bytes, as offsets into its arena.
    private struct Allocation {
        var start: Int
        var end: Int
    }

    /// An arena by its address (an integer, so the list is plain Sendable data behind the mutex).
    private struct Arena {
        var address: Int
        var base: UnsafeMutableRawPointer { UnsafeMutableRawPointer(bitPattern: address)! }
        var size: Int
        var used: Int
        /// The sounds alive in it, in address order (they are carved in that order).
        var live: [Allocation]

        /// The index of the first live allocation that ends after `offset`.
        func firstLive(endingAfter offset: Int) -> Int {
            var low = 0, high = live.count
            while low < high {
                let mid = (low + high) / 2
                if live[mid].end <= offset { low = mid + 1 } else { high = mid }
            }
            return low
        }

        /// Whether live sounds cover `range` byte for byte (none of its sounds freed yet).
        func isFullyLive(_ range: Range<Int>) -> Bool {
            var covered = range.lowerBound
            var i = firstLive(endingAfter: range.lowerBound)
            while i < live.count, live[i].start <= covered, covered < range.upperBound {
                covered = live[i].end
                i += 1
            }
            return covered >= range.upperBound
        }
    }

    private let arenas = Locked<[Arena]>([])

    package init() {}

    package func allocateSamples(_ count: Int) -> UnsafeMutablePointer<Float> {
        let bytes = max(64, (count * MemoryLayout<Float>.stride + 63) & ~63)
        let raw: UnsafeMutableRawPointer = arenas.withLock { arenas in
            let i: Int
            if let last = arenas.indices.last, arenas[last].size - arenas[last].used >= bytes {
                i = last
            } else {
                let size = max(Self.arenaSize, (bytes + Self.hugePage - 1) & ~(Self.hugePage - 1))
                let base = Self.mapArena(size)
                // Keep the arena with the most room last: it is the one that serves new sounds.
                let arena = Arena(address: Int(bitPattern: base), size: size, used: 0, live: [])
                if let last = arenas.last, last.size - last.used > size - bytes {
                    arenas.insert(arena, at: arenas.count - 1)
                    i = arenas.count - 2
                } else {
                    arenas.append(arena)
                    i = arenas.count - 1
                }
            }
            let start = arenas[i].used
            arenas[i].used += bytes
            arenas[i].live.append(Allocation(start: start, end: start + bytes))
            // The 2 MB ranges this sound completes go on huge pages, if no sound in them was freed.
            let filled = (start & ~(Self.hugePage - 1))..<(arenas[i].used & ~(Self.hugePage - 1))
            for range in stride(from: filled.lowerBound, to: filled.upperBound, by: Self.hugePage) {
                if arenas[i].isFullyLive(range..<(range + Self.hugePage)) {
                    Self.moveToHugePage(arenas[i].base + range)
                }
            }
            return arenas[i].base + start
        }
        return raw.bindMemory(to: Float.self, capacity: count)
    }

    package func deallocateSamples(_ samples: UnsafeMutablePointer<Float>, count: Int) {
        let address = Int(bitPattern: UnsafeMutableRawPointer(samples))
        arenas.withLock { arenas in
            guard let i = arenas.firstIndex(where: { address >= $0.address && address < $0.address + $0.size }) else {
                preconditionFailure("samples not from this memory")
            }
            let offset = address - arenas[i].address
            let k = arenas[i].firstLive(endingAfter: offset)
            guard k < arenas[i].live.count, arenas[i].live[k].start == offset else {
                preconditionFailure("samples freed twice or not allocated here")
            }
            arenas[i].live.remove(at: k)
            if arenas[i].live.isEmpty {
                munmap(arenas[i].base, arenas[i].size)
                arenas.remove(at: i)
                return
            }
            // Give back the whole gap the sound leaves between the live sounds around it: its
            // pages and those it shared with sounds already freed. Past the last live sound
            // nothing is in use up to the end of what was carved.
            let low = k > 0 ? arenas[i].live[k - 1].end : 0
            let high = k < arenas[i].live.count ? arenas[i].live[k].start : arenas[i].used
            let start = (low + Self.page - 1) & ~(Self.page - 1)
            let end = k < arenas[i].live.count
                ? high & ~(Self.page - 1)
                : min(arenas[i].size, (high + Self.page - 1) & ~(Self.page - 1))
            if end > start { _ = madvise(arenas[i].base + start, end - start, MADV_DONTNEED) }
        }
    }

    /// Bytes currently mapped for samples (arenas in use).
    package var mappedBytes: Int { arenas.withLock { $0.reduce(0) { $0 + $1.size } } }

    /// A 2 MB-aligned anonymous mapping of `size` bytes, on ordinary pages until its ranges fill.
    /// Running out of address space or memory here is as fatal as `malloc` failing.
    private static func mapArena(_ size: Int) -> UnsafeMutableRawPointer {
        let span = size + hugePage
        guard let mapped = mmap(nil, span, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0),
              mapped != MAP_FAILED else {
            fatalError("out of memory: cannot map \(size) bytes for samples")
        }
        // Trim to a 2 MB boundary: the kernel can only back aligned 2 MB ranges with huge pages.
        let start = (Int(bitPattern: mapped) + hugePage - 1) & ~(hugePage - 1)
        let head = start - Int(bitPattern: mapped)
        if head > 0 { munmap(mapped, head) }
        let tail = span - head - size
        if tail > 0 { munmap(UnsafeMutableRawPointer(bitPattern: start + size), tail) }
        let base = UnsafeMutableRawPointer(bitPattern: start)!
        // Where the kernel puts every mapping on huge pages (`always`), not this one: its unfilled
        // end would hold a 2 MB page from the first sample written into it.
        _ = madvise(base, size, MADV_NOHUGEPAGE)
        return base
    }

    /// Puts the 2 MB range at `address` (aligned, all of it in use) on a huge page: now where the
    /// kernel can collapse on request, otherwise when `khugepaged` comes to it. Hints: where huge
    /// pages are unavailable they fail harmlessly.
    private static func moveToHugePage(_ address: UnsafeMutableRawPointer) {
        _ = madvise(address, hugePage, MADV_HUGEPAGE)
        _ = madvise(address, hugePage, adviceCollapse)
    }
}
