import Glibc
import SamplerCore
import Locking

/// Sample memory on 2 MB pages where the kernel allows it (transparent huge pages in `always` or
/// `madvise` mode), so that thousands of voices reading thousands of sounds do not each start a
/// period with a TLB miss (in a VM, a nested page walk). Samples are carved from 2 MB-aligned
/// arenas (`mmap` + `madvise(MADV_HUGEPAGE)`) at 64-byte alignment. An arena is unmapped when every
/// sound in it is freed; a sound freed inside a live arena gives its memory back
/// (`MADV_DONTNEED`) but not its address space, which is not reused (sounds are loaded once and
/// live long). Where huge pages are off, this is ordinary memory.
///
/// Every sound the loaders decode lives here. Thread-safe (a mutex); control threads only.
///
/// `@unchecked Sendable` by contract: its only mutable state, the arena list, is `Locked` (`arenas`),
/// and the mappings are created, trimmed and released only with that lock held.
public final class HugePageSampleMemory: SampleMemory, @unchecked Sendable {
    /// The one instance the loaders use.
    public static let shared = HugePageSampleMemory()

    static let hugePage = 2 << 20
    /// Arenas are at least this big; a larger sound gets an arena of its own size.
    static let arenaSize = 32 << 20

    /// An arena by its address (an integer, so the list is plain Sendable data behind the mutex).
    private struct Arena {
        var address: Int
        var base: UnsafeMutableRawPointer { UnsafeMutableRawPointer(bitPattern: address)! }
        var size: Int
        var used: Int
        var live: Int
    }

    private let arenas = Locked<[Arena]>([])

    public init() {}

    public func allocateSamples(_ count: Int) -> UnsafeMutablePointer<Float> {
        let bytes = max(64, (count * MemoryLayout<Float>.stride + 63) & ~63)
        let raw: UnsafeMutableRawPointer = arenas.withLock { arenas in
            if let i = arenas.indices.last, arenas[i].size - arenas[i].used >= bytes {
                let p = arenas[i].base + arenas[i].used
                arenas[i].used += bytes
                arenas[i].live += 1
                return p
            }
            let size = max(Self.arenaSize, (bytes + Self.hugePage - 1) & ~(Self.hugePage - 1))
            let base = Self.mapArena(size)
            // Keep the arena with the most room last: it is the one that serves new sounds.
            let arena = Arena(address: Int(bitPattern: base), size: size, used: bytes, live: 1)
            if let last = arenas.last, last.size - last.used > size - bytes {
                arenas.insert(arena, at: arenas.count - 1)
            } else {
                arenas.append(arena)
            }
            return base
        }
        return raw.bindMemory(to: Float.self, capacity: count)
    }

    public func deallocateSamples(_ samples: UnsafeMutablePointer<Float>, count: Int) {
        let address = UnsafeMutableRawPointer(samples)
        arenas.withLock { arenas in
            guard let i = arenas.firstIndex(where: { address >= $0.base && address < $0.base + $0.size }) else {
                preconditionFailure("samples not from this memory")
            }
            arenas[i].live -= 1
            if arenas[i].live == 0 {
                munmap(arenas[i].base, arenas[i].size)
                arenas.remove(at: i)
            } else {
                // The space is not reused, but its memory goes back to the system: the whole
                // 4 KiB pages inside the sound's samples (a huge page around them is split).
                let page = 4096
                let start = (Int(bitPattern: address) + page - 1) & ~(page - 1)
                let end = (Int(bitPattern: address) + count * MemoryLayout<Float>.stride) & ~(page - 1)
                if end > start { _ = madvise(UnsafeMutableRawPointer(bitPattern: start), end - start, MADV_DONTNEED) }
            }
        }
    }

    /// Bytes currently mapped for samples (arenas in use).
    public var mappedBytes: Int { arenas.withLock { $0.reduce(0) { $0 + $1.size } } }

    /// A 2 MB-aligned anonymous mapping of `size` bytes, marked for huge pages. Running out of
    /// address space or memory here is as fatal as `malloc` failing.
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
        _ = madvise(base, size, MADV_HUGEPAGE)  // a hint: fails harmlessly where THP is off
        return base
    }
}
