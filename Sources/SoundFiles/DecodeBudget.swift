import Foundation

/// How much memory decoded sounds may take: one file, and everything one patch or kit loads.
/// 4,096 MB by default (an hour of stereo at 48 kHz is 1,383 MB as float); the environment
/// variable `SAMPLER_MEMORY_BUDGET_MB` changes it. Long files can stream instead (they then cost
/// a few seconds of ring each).
package enum DecodeBudget {
    /// The budget in bytes.
    package static var bytes: Int {
        if let text = ProcessInfo.processInfo.environment["SAMPLER_MEMORY_BUDGET_MB"], let mb = Int(text), mb > 0 {
            return min(mb, 1 << 30) << 20
        }
        return 4096 << 20
    }

    /// The budget in whole megabytes, for messages.
    package static var megabytes: Int { bytes >> 20 }

    /// What `paths` will take decoded at `sampleRate` (nil: each file's own rate), from their
    /// headers; files that cannot be opened count 0 (loading them reports the error).
    package static func decodedBytes(of paths: [String], sampleRate: Double?) -> Int {
        var total = 0
        for path in Set(paths) {
            guard let file = try? StreamFile(path: path), file.sampleRate > 0 else { continue }
            let ratio = sampleRate.map { $0 / file.sampleRate } ?? 1
            let frames = Double(file.frameCount) * ratio
            total = total.addingReportingOverflow(Int(min(frames * Double(file.channelCount) * 4, 1e15))).partialValue
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
