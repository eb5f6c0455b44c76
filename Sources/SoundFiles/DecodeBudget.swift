import Foundation
import CSndFile

/// How much memory decoded sounds may take: one file, and everything one patch or kit loads.
/// 4,096 MB by default (an hour of stereo at 48 kHz is 1,383 MB as float); the environment
/// variable `SAMPLER_MEMORY_BUDGET_MB` changes it. Long files can stream instead (they then cost
/// a few seconds of ring each).
package enum DecodeBudget {
    /// The budget in bytes.
    package static var bytes: Int {
        // getenv, not ProcessInfo's environment (a dictionary built anew at each call).
        if let raw = getenv("SAMPLER_MEMORY_BUDGET_MB"), let mb = Int(String(cString: raw)), mb > 0 {
            return min(mb, 1 << 30) << 20
        }
        return 4096 << 20
    }

    /// The budget in whole megabytes, for messages.
    package static var megabytes: Int { bytes >> 20 }

    /// One decoded copy of a file, as a kit holds it: its frames `offset … end` (nil: to the
    /// end), at the kit's rate, then stretched by `scale` (a tuning: 2^(−semitones/12)).
    package struct Copy: Hashable, Sendable {
        package var path: String
        package var offset: Int
        package var end: Int?
        package var scale: Double
        package var reverse: Bool
        /// Seconds of silence before it (a delayed instrument's copy).
        package var leadingSeconds: Double
        /// For a file held in memory (a patch's `"data"`): its frames, channels and rate, read from
        /// its bytes (`header(of:)`); `path` then names it only, and is not opened.
        package var header: Header?

        package init(path: String, offset: Int = 0, end: Int? = nil, scale: Double = 1, reverse: Bool = false,
                     leadingSeconds: Double = 0, header: Header? = nil) {
            self.leadingSeconds = leadingSeconds
            self.header = header
            self.path = path
            self.offset = offset
            self.end = end
            self.scale = scale
            self.reverse = reverse
        }
    }

    /// A sound file's frames, channels and rate.
    package struct Header: Hashable, Sendable {
        package var frames: Int
        package var channels: Int
        package var rate: Double

        package init(frames: Int, channels: Int, rate: Double) {
            self.frames = frames
            self.channels = channels
            self.rate = rate
        }
    }

    /// The header of the sound file in `bytes`, nil when libsndfile cannot read it.
    package static func header(of bytes: [UInt8]) -> Header? {
        bytes.withUnsafeBytes { buffer -> Header? in
            let memory = MemoryFile(bytes: buffer)
            return withExtendedLifetime(memory) {
                var info = SF_INFO()
                guard let handle = memory.open(&info) else { return nil }
                sf_close(handle)
                return Header(frames: Int(info.frames), channels: Int(info.channels), rate: Double(info.samplerate))
            }
        }
    }

    /// What `paths` will take decoded at `sampleRate` (nil: each file's own rate), from their
    /// headers; files that cannot be opened count 0 (loading them reports the error).
    package static func decodedBytes(of paths: [String], sampleRate: Double?) -> Int {
        decodedBytes(of: paths.map { Copy(path: $0) }, sampleRate: sampleRate)
    }

    /// What `copies` will take decoded at `sampleRate` (nil: each file's own rate): each
    /// distinct copy counts, every file's header read once.
    package static func decodedBytes(of copies: [Copy], sampleRate: Double?) -> Int {
        var headers: [String: (frames: Int, channels: Int, rate: Double)?] = [:]
        var total = 0
        for copy in Set(copies) {
            if let known = copy.header {
                headers[copy.path] = .some((known.frames, known.channels, known.rate))
            } else if headers[copy.path] == nil {
                // Kept when the file cannot be read (nil inside): assigning nil would drop the key.
                headers[copy.path] = .some((try? StreamFile(path: copy.path)).map { (Int($0.frameCount), $0.channelCount, $0.sampleRate) })
            }
            guard let header = headers[copy.path]!, header.rate > 0 else { continue }
            let start = min(max(0, copy.offset), header.frames)
            let stop = min((copy.end ?? (header.frames - 1)) + 1, header.frames)
            let ratio = sampleRate.map { $0 / header.rate } ?? 1
            let scale = copy.scale.isFinite && copy.scale > 0 ? copy.scale : 1
            let leading = copy.leadingSeconds.isFinite ? max(0, copy.leadingSeconds) * (sampleRate ?? header.rate) : 0
            let frames = Double(max(0, stop - start)) * ratio * scale + leading
            total = total.addingReportingOverflow(Int(min(frames * Double(header.channels) * 4, 1e15))).partialValue
        }
        return total
    }

    /// Throws (with `describe`'s message) when `bytes` exceed the budget.
    package static func check(_ bytes: Int, what: String) throws(SoundFileError) {
        guard bytes > Self.bytes else { return }
        throw SoundFileError(file: "", reason: .tooLarge(
            "\(what) need \(Self.mb(bytes)) MB decoded in memory, more than the budget of \(megabytes) MB "
            + "(SAMPLER_MEMORY_BUDGET_MB raises it; long files can stream instead)"))
    }

    static func mb(_ bytes: Int) -> Int { (bytes + (1 << 20) - 1) >> 20 }
}
