import CSndFile
import Foundation

/// The loop a sound file's header names (a WAV file's `smpl` chunk, an AIFF file's markers), as
/// sfizz reads it: the first loop, its frames `start … end` with both ends included.
package enum SoundFileLoops {
    /// The first loop of the file at `path`, nil when it names none or cannot be read (the load
    /// reports that). Control thread only.
    package static func firstLoop(path: String, root: String? = nil) -> ClosedRange<Int>? {
        guard let fd = try? SoundFileError.openGated(path, root: root) else { return nil }
        defer { close(fd) }
        var info = SF_INFO()
        guard let handle = SoundFileError.openLock.withLock({ sf_open_fd(fd, Int32(SFM_READ), &info, 0) }) else { return nil }
        if let loop = firstLoop(handle, info) { return loop }
        return flacInstrument(of: fd, info).loop.flatMap { clamp($0, frames: Int(info.frames)) }
    }

    /// The first loop of the sound file held in `bytes` (see `firstLoop(path:)`).
    package static func firstLoop(bytes: [UInt8]) -> ClosedRange<Int>? {
        bytes.withUnsafeBytes { buffer -> ClosedRange<Int>? in
            let memory = MemoryFile(bytes: buffer)
            return withExtendedLifetime(memory) {
                var info = SF_INFO()
                guard let handle = memory.open(&info) else { return nil }
                if let loop = firstLoop(handle, info) { return loop }
                return flacInstrument(buffer).loop.flatMap { clamp($0, frames: Int(info.frames)) }
            }
        }
    }

    /// The root key (MIDI note) the file at `path` names in its instrument chunk (a WAV's
    /// `smpl` unity note, 0…127), nil when it names none or cannot be read. Control thread only.
    package static func rootKey(path: String, root: String? = nil) -> Int? {
        guard let fd = try? SoundFileError.openGated(path, root: root) else { return nil }
        defer { close(fd) }
        var info = SF_INFO()
        guard let handle = SoundFileError.openLock.withLock({ sf_open_fd(fd, Int32(SFM_READ), &info, 0) }) else { return nil }
        return rootKey(handle) ?? flacInstrument(of: fd, info).rootKey
    }

    /// The root key of the sound file held in `bytes` (see `rootKey(path:)`).
    package static func rootKey(bytes: [UInt8]) -> Int? {
        bytes.withUnsafeBytes { buffer -> Int? in
            let memory = MemoryFile(bytes: buffer)
            return withExtendedLifetime(memory) {
                var info = SF_INFO()
                guard let handle = memory.open(&info) else { return nil }
                return rootKey(handle) ?? flacInstrument(buffer).rootKey
            }
        }
    }

    private static func rootKey(_ handle: OpaquePointer) -> Int? {
        defer { sf_close(handle) }
        var note: Int32 = 0
        guard sampler_base_note(handle, &note) == 1 else { return nil }
        return Int(min(127, max(0, note)))
    }

    /// A loop (both ends included) held to a file of `frames` frames; nil when nothing is left.
    private static func clamp(_ loop: ClosedRange<Int>, frames: Int) -> ClosedRange<Int>? {
        let end = min(loop.upperBound, frames - 1)
        return loop.lowerBound <= end ? loop.lowerBound...end : nil
    }

    /// `flacInstrument` of the open file `fd` when libsndfile reads it as FLAC (`info`), its
    /// metadata blocks read one at a time with `pread` (the descriptor's offset untouched).
    private static func flacInstrument(of fd: Int32, _ info: SF_INFO) -> (rootKey: Int?, loop: ClosedRange<Int>?) {
        guard info.format & Int32(SF_FORMAT_TYPEMASK) == Int32(SF_FORMAT_FLAC) else { return (nil, nil) }
        return flacInstrument { offset, count in
            var bytes = [UInt8](repeating: 0, count: count)
            let n = bytes.withUnsafeMutableBytes { pread(fd, $0.baseAddress, count, off_t(offset)) }
            return n == count ? bytes : nil
        }
    }

    /// `flacInstrument` of the sound file held in `bytes`.
    package static func flacInstrument(_ bytes: UnsafeRawBufferPointer) -> (rootKey: Int?, loop: ClosedRange<Int>?) {
        flacInstrument { offset, count in
            offset >= 0 && count <= bytes.count && offset <= bytes.count - count ? Array(bytes[offset..<(offset + count)]) : nil
        }
    }

    /// The root key and first loop a FLAC file's metadata names in a `smpl` chunk kept as an
    /// APPLICATION block "riff" (what `flac --keep-foreign-metadata` writes, and sfizz reads;
    /// libsndfile does not), `read(offset, count)` giving the file's bytes. Bounded: at most 256
    /// metadata blocks, only APPLICATION blocks of at most 64 kB read; anything malformed or cut
    /// short gives nils.
    static func flacInstrument(_ read: (Int, Int) -> [UInt8]?) -> (rootKey: Int?, loop: ClosedRange<Int>?) {
        guard read(0, 4) == Array("fLaC".utf8) else { return (nil, nil) }
        var offset = 4
        for _ in 0..<256 {
            guard let header = read(offset, 4) else { break }
            let last = header[0] & 0x80 != 0, type = header[0] & 0x7F
            let length = Int(header[1]) << 16 | Int(header[2]) << 8 | Int(header[3])
            let body = offset + 4
            // APPLICATION "riff", holding one RIFF chunk: "smpl", its size, its fields.
            if type == 2, length >= 4 + 8 + 36, length <= 1 << 16, let b = read(body, length),
               Array(b[0..<8]) == Array("riffsmpl".utf8) {
                func u32(_ i: Int) -> Int { Int(b[i]) | Int(b[i + 1]) << 8 | Int(b[i + 2]) << 16 | Int(b[i + 3]) << 24 }
                let size = u32(8), d = 12
                guard size >= 36, d + min(size, 36 + 24) <= b.count else { break }
                let note = u32(d + 12)
                var loop: ClosedRange<Int>?
                if u32(d + 28) > 0, size >= 36 + 24, d + 36 + 24 <= b.count {
                    let start = u32(d + 36 + 8), stop = u32(d + 36 + 12)
                    if start <= stop { loop = start...stop }
                }
                return (note <= 127 ? note : nil, loop)
            }
            if last { break }
            offset = body + length
        }
        return (nil, nil)
    }

    /// The first loop of the open `handle` (closed here).
    private static func firstLoop(_ handle: OpaquePointer, _ info: SF_INFO) -> ClosedRange<Int>? {
        defer { sf_close(handle) }
        var first: UInt32 = 0, past: UInt32 = 0
        guard sampler_first_loop(handle, &first, &past) == 1 else { return nil }
        // libsndfile gives the end one past the loop's last frame.
        let start = Int(first), end = min(Int(past) - 1, Int(info.frames) - 1)
        return start <= end ? start...end : nil
    }
}
