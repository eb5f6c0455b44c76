import CSndFile
import Locking
import SafeFiles

/// Why a sound file could not be read or written, with the file it concerns.
///
/// `description` is one line a user can act on: `"<file>: <what is wrong>"`.
public struct SoundFileError: Error, Equatable, CustomStringConvertible {
    public enum Reason: Equatable, Sendable {
        /// Nothing exists at the path.
        case missing
        /// The file exists but cannot be opened (a directory, no permission, an I/O error).
        case notReadable(String)
        /// libsndfile does not recognise the contents; carries its `sf_strerror` message.
        case notAudio(String)
        /// The file decodes to zero frames.
        case empty
        /// The file has a channel count other than 1 or 2.
        case unsupportedChannelCount(Int)
        /// libsamplerate refused the conversion; carries its message.
        case resampleFailed(String)
        /// The file could not be created or written; carries the reason.
        case writeFailed(String)
        /// Decoding would take more memory than `DecodeBudget` allows; carries the message.
        case tooLarge(String)
    }

    /// The path or name the error concerns, as the caller gave it; empty when there is none
    /// (`Resampler` used on its own).
    public var file: String
    public var reason: Reason

    public init(file: String, reason: Reason) {
        self.file = file
        self.reason = reason
    }

    public var description: String {
        file.isEmpty ? problem : "\(file): \(problem)"
    }

    private var problem: String {
        switch reason {
        case .missing: "no such file"
        case .notReadable(let why): "cannot read the file (\(why))"
        case .notAudio(let why): "not an audio file libsndfile can read (\(why))"
        case .empty: "the file has zero frames"
        case .unsupportedChannelCount(let n): "unsupported channel count \(n) (expected 1 or 2)"
        case .resampleFailed(let why): "resampling failed (\(why))"
        case .writeFailed(let why): "cannot write the file (\(why))"
        case .tooLarge(let why): why
        }
    }
}

extension SoundFileError {
    /// The message of libsndfile's error for `handle`, or of the last failed open when `nil`.
    static func libsndfileMessage(_ handle: OpaquePointer?) -> String {
        String(cString: sf_strerror(handle))
    }

    /// libsndfile keeps the error of a failed open in process-wide variables: every open for
    /// reading, with the reading of its error, holds this lock (files decode on several threads).
    static let openLock = CheckedLock("libsndfile's opens")

    /// Opens with `open` under `openLock`; a failure is the error naming `file` (not readable,
    /// or not audio), read before another open can replace it.
    static func openSoundFile(_ file: String, _ open: () -> OpaquePointer?) throws(SoundFileError) -> OpaquePointer {
        let outcome: Result<OpaquePointer, SoundFileError> = openLock.withLock {
            if let handle = open() { return .success(handle) }
            let message = libsndfileMessage(nil)
            let system = sf_error(nil) == Int32(SF_ERR_SYSTEM)
            return .failure(SoundFileError(file: file, reason: system ? .notReadable(message) : .notAudio(message)))
        }
        return try outcome.get()
    }
}

extension SoundFileError {
    /// A descriptor of the regular file at `path` (through `FileGate`), or the error naming it.
    static func openGated(_ path: String, root: String? = nil) throws(SoundFileError) -> Int32 {
        do {
            return try FileGate.open(path, root: root)
        } catch .unreadable("no such file") {
            throw SoundFileError(file: path, reason: .missing)
        } catch .notRegular("a directory") {
            throw SoundFileError(file: path, reason: .notReadable("it is a directory"))
        } catch {
            throw SoundFileError(file: path, reason: .notReadable(error.reason))
        }
    }
}
