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
        return flacInstrument(headerOf: fd).loop.flatMap { clamp($0, frames: Int(info.frames)) }
    }

    /// The first loop of the sound file held in `bytes` (see `firstLoop(path:)`).
    package static func firstLoop(bytes: [UInt8]) -> ClosedRange<Int>? {
        bytes.withUnsafeBytes { buffer -> ClosedRange<Int>? in
            let memory = MemoryFile(bytes: buffer)
            return withExtendedLifetime(memory) {
                var info = SF_INFO()
                guard let handle = memory.open(&info) else { return nil }
                if let loop = firstLoop(handle, info) { return loop }
                return flacInstrument(UnsafeRawBufferPointer(rebasing: buffer.prefix(flacHeaderBytes))).loop
                    .flatMap { clamp($0, frames: Int(info.frames)) }
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
        return rootKey(handle) ?? flacInstrument(headerOf: fd).rootKey
    }

    /// The root key of the sound file held in `bytes` (see `rootKey(path:)`).
    package static func rootKey(bytes: [UInt8]) -> Int? {
        bytes.withUnsafeBytes { buffer -> Int? in
            let memory = MemoryFile(bytes: buffer)
            return withExtendedLifetime(memory) {
                var info = SF_INFO()
                guard let handle = memory.open(&info) else { return nil }
                return rootKey(handle) ?? flacInstrument(UnsafeRawBufferPointer(rebasing: buffer.prefix(flacHeaderBytes))).rootKey
            }
        }
    }

    private static func rootKey(_ handle: OpaquePointer) -> Int? {
        defer { sf_close(handle) }
        var note: Int32 = 0
        guard sampler_base_note(handle, &note) == 1 else { return nil }
        return Int(min(127, max(0, note)))
    }

    /// How much of a FLAC file's start is searched for its metadata.
    static let flacHeaderBytes = 1 << 20

    /// A loop (both ends included) held to a file of `frames` frames; nil when nothing is left.
    private static func clamp(_ loop: ClosedRange<Int>, frames: Int) -> ClosedRange<Int>? {
        let end = min(loop.upperBound, frames - 1)
        return loop.lowerBound <= end ? loop.lowerBound...end : nil
    }

    /// `flacInstrument` of the first `flacHeaderBytes` of the open file `fd` (read with `pread`,
    /// the descriptor's offset untouched).
    private static func flacInstrument(headerOf fd: Int32) -> (rootKey: Int?, loop: ClosedRange<Int>?) {
        var bytes = [UInt8](repeating: 0, count: flacHeaderBytes)
        let n = bytes.withUnsafeMutableBytes { pread(fd, $0.baseAddress, $0.count, 0) }
        guard n > 0 else { return (nil, nil) }
        return bytes.withUnsafeBytes { flacInstrument(UnsafeRawBufferPointer(rebasing: $0.prefix(n))) }
    }

    /// The root key and first loop a FLAC file's metadata names in a `smpl` chunk kept as an
    /// APPLICATION block "riff" (what `flac --keep-foreign-metadata` writes, and sfizz reads;
    /// libsndfile does not). Bounded by `bytes`; anything malformed gives nils.
    package static func flacInstrument(_ bytes: UnsafeRawBufferPointer) -> (rootKey: Int?, loop: ClosedRange<Int>?) {
        func u32(_ i: Int) -> Int { Int(bytes[i]) | Int(bytes[i + 1]) << 8 | Int(bytes[i + 2]) << 16 | Int(bytes[i + 3]) << 24 }
        func tag(_ i: Int, _ s: String) -> Bool { i + 4 <= bytes.count && Array(bytes[i..<(i + 4)]) == Array(s.utf8) }
        guard tag(0, "fLaC") else { return (nil, nil) }
        var i = 4
        while i + 4 <= bytes.count {
            let last = bytes[i] & 0x80 != 0, type = bytes[i] & 0x7F
            let length = Int(bytes[i + 1]) << 16 | Int(bytes[i + 2]) << 8 | Int(bytes[i + 3])
            let body = i + 4, end = body + length
            guard end <= bytes.count else { break }
            // APPLICATION "riff", holding one RIFF chunk: "smpl", its size, its fields.
            if type == 2, length >= 4 + 8 + 36, tag(body, "riff"), tag(body + 4, "smpl") {
                let d = body + 12
                let size = u32(body + 8)
                guard size >= 36, d + min(size, 36 + 24) <= end else { break }
                let note = u32(d + 12)
                var loop: ClosedRange<Int>?
                if u32(d + 28) > 0, size >= 36 + 24, d + 36 + 24 <= end {
                    let start = u32(d + 36 + 8), stop = u32(d + 36 + 12)
                    if start <= stop { loop = start...stop }
                }
                return (note <= 127 ? note : nil, loop)
            }
            if last { break }
            i = end
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
