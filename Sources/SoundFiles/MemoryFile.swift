import CSndFile
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Bytes in memory that libsndfile reads through its virtual I/O callbacks.
///
/// The bytes are borrowed: the caller keeps them alive and unmoved while the `SNDFILE` is open.
/// Control thread only.
final class MemoryFile {
    private let bytes: UnsafeRawBufferPointer
    private var position = 0

    init(bytes: UnsafeRawBufferPointer) {
        self.bytes = bytes
    }

    /// Opens the bytes for reading. `info` is read for headerless formats and filled in on success.
    /// Keep `self` alive until `sf_close`.
    func open(_ info: UnsafeMutablePointer<SF_INFO>) -> OpaquePointer? {
        var io = MemoryFile.callbacks
        return sf_open_virtual(&io, Int32(SFM_READ), info, Unmanaged.passUnretained(self).toOpaque())
    }

    private static func from(_ context: UnsafeMutableRawPointer?) -> MemoryFile {
        Unmanaged<MemoryFile>.fromOpaque(context!).takeUnretainedValue()
    }

    private static var callbacks: SF_VIRTUAL_IO {
        SF_VIRTUAL_IO(
            get_filelen: { context in
                sf_count_t(MemoryFile.from(context).bytes.count)
            },
            seek: { offset, whence, context in
                let file = MemoryFile.from(context)
                let base: Int
                switch whence {
                case SEEK_SET: base = 0
                case SEEK_CUR: base = file.position
                case SEEK_END: base = file.bytes.count
                default: return -1
                }
                let target = base + Int(offset)
                guard target >= 0 else { return -1 }
                // Past the end is allowed, as with a real file; reads there return nothing.
                file.position = target
                return sf_count_t(target)
            },
            read: { destination, count, context in
                let file = MemoryFile.from(context)
                let available = max(0, file.bytes.count - file.position)
                let n = min(Int(count), available)
                guard n > 0, let destination, let source = file.bytes.baseAddress else { return 0 }
                destination.copyMemory(from: source + file.position, byteCount: n)
                file.position += n
                return sf_count_t(n)
            },
            write: { _, _, _ in 0 },
            tell: { context in
                sf_count_t(MemoryFile.from(context).position)
            }
        )
    }
}
