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
        return firstLoop(handle, info)
    }

    /// The first loop of the sound file held in `bytes` (see `firstLoop(path:)`).
    package static func firstLoop(bytes: [UInt8]) -> ClosedRange<Int>? {
        bytes.withUnsafeBytes { buffer -> ClosedRange<Int>? in
            let memory = MemoryFile(bytes: buffer)
            return withExtendedLifetime(memory) {
                var info = SF_INFO()
                guard let handle = memory.open(&info) else { return nil }
                return firstLoop(handle, info)
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
        return rootKey(handle)
    }

    /// The root key of the sound file held in `bytes` (see `rootKey(path:)`).
    package static func rootKey(bytes: [UInt8]) -> Int? {
        bytes.withUnsafeBytes { buffer -> Int? in
            let memory = MemoryFile(bytes: buffer)
            return withExtendedLifetime(memory) {
                var info = SF_INFO()
                guard let handle = memory.open(&info) else { return nil }
                return rootKey(handle)
            }
        }
    }

    private static func rootKey(_ handle: OpaquePointer) -> Int? {
        defer { sf_close(handle) }
        var note: Int32 = 0
        guard sampler_base_note(handle, &note) == 1 else { return nil }
        return Int(min(127, max(0, note)))
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
