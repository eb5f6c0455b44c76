import Glibc
import Locking
import SamplerCore

/// The memory of a library's sample heads (the frames of each streamed sample kept in memory,
/// which a voice plays before its tail is read from disk): carved one after another from
/// anonymous mappings of 16 MB (a head over that gets one of its own), and locked in memory
/// (`mlock`) by `lock()` once the load is done, so that a head is never paged out under memory
/// pressure and read back from disk on the render thread. Locking may be refused
/// (`RLIMIT_MEMLOCK`, often 8 MB without privileges): `lock()` says how much it locked and why
/// not the rest. Nothing is given back before every head is freed; then the mappings are
/// unmapped (their locks go with them).
///
/// `@unchecked Sendable` by contract: the mappings are `Locked` and created, locked and unmapped
/// only with that lock held; a head's samples are written once by the thread that allocated
/// them, before the sound is shared.
package final class HeadMemory: SampleMemory, @unchecked Sendable {
    private struct Mapping {
        var address: Int
        var size: Int
        var used: Int
        var locked = false
    }

    private struct State {
        var mappings: [Mapping] = []
        var live = 0
    }

    private static let mappingSize = 16 << 20
    private let state = Locked(State())

    package init() {}

    deinit {
        state.withLock { s in
            for m in s.mappings { munmap(UnsafeMutableRawPointer(bitPattern: m.address), m.size) }
            s.mappings = []
        }
    }

    package func allocateSamples(_ count: Int) -> UnsafeMutablePointer<Float> {
        let bytes = (max(1, count) * MemoryLayout<Float>.size + 63) & ~63
        return state.withLock { s in
            s.live += 1
            if let i = s.mappings.indices.last, s.mappings[i].size - s.mappings[i].used >= bytes {
                let address = s.mappings[i].address + s.mappings[i].used
                s.mappings[i].used += bytes
                return UnsafeMutablePointer(bitPattern: address)!
            }
            let size = max(Self.mappingSize, (bytes + 4095) & ~4095)
            guard let mapped = mmap(nil, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0),
                  mapped != MAP_FAILED else {
                // Out of address space: the heap (which then fails as any allocation does).
                return UnsafeMutableRawPointer.allocate(byteCount: bytes, alignment: 64).bindMemory(to: Float.self, capacity: count)
            }
            // Huge pages where the system gives them on request: a page fault per 2 MB of
            // heads rather than per 4 kB.
            _ = madvise(mapped, size, MADV_HUGEPAGE)
            s.mappings.append(Mapping(address: Int(bitPattern: mapped), size: size, used: bytes))
            return mapped.bindMemory(to: Float.self, capacity: count)
        }
    }

    package func deallocateSamples(_ samples: UnsafeMutablePointer<Float>, count: Int) {
        let address = Int(bitPattern: samples)
        state.withLock { s in
            s.live -= 1
            if !s.mappings.contains(where: { address >= $0.address && address < $0.address + $0.size }) {
                UnsafeMutableRawPointer(samples).deallocate()
            }
        }
    }

    /// The bytes of heads carved so far (whole pages).
    package var bytes: Int { state.withLock { s in s.mappings.reduce(0) { $0 + (($1.used + 4095) & ~4095) } } }

    /// Locks every head carved so far in memory: the bytes locked, and the error of the first
    /// refusal (nil when all are locked).
    @discardableResult
    package func lock() -> (locked: Int, error: Int32?) {
        state.withLock { s in
            var locked = 0
            var failure: Int32?
            for i in s.mappings.indices {
                let length = (s.mappings[i].used + 4095) & ~4095
                if s.mappings[i].locked { locked += length; continue }
                guard failure == nil else { continue }
                if mlock(UnsafeRawPointer(bitPattern: s.mappings[i].address), length) == 0 {
                    s.mappings[i].locked = true
                    locked += length
                } else {
                    failure = errno
                }
            }
            return (locked, failure)
        }
    }

    /// This process's limit on locked memory (`RLIMIT_MEMLOCK`), for messages.
    package static var lockLimit: String {
        var limit = rlimit()
        guard getrlimit(__rlimit_resource_t(__RLIMIT_MEMLOCK.rawValue), &limit) == 0 else { return "unknown" }
        return limit.rlim_cur == rlim_t.max ? "unlimited" : size(Int(limit.rlim_cur))
    }

    /// `bytes` in kB below a megabyte, else in MB.
    package static func size(_ bytes: Int) -> String { bytes < 1 << 20 ? "\(bytes >> 10) kB" : "\(bytes >> 20) MB" }
}
