import Foundation
import Locking
import Patches

/// A load's progress on standard error, when it is a terminal and the load takes over a second:
/// files, megabytes and the seconds left, then what was loaded. Only where the command line asks
/// for it (`LoadedPatch(showsProgress:)`: the program's own patch, not a SamplerKit load or an OSC
/// load while the status line runs). Any thread.
final class LoadProgress: Sendable {
    private struct State {
        var files = 0
        var bytes = 0
        var lastShown = 0.0
        var shown = false
    }
    private let totalFiles: Int
    private let totalBytes: Int
    private let started = Date()
    private let enabled: Bool
    private let state = Locked(State())

    init(files: [SampleFile], enabled: Bool) {
        totalFiles = files.count
        self.enabled = enabled && isatty(STDERR_FILENO) != 0
        totalBytes = self.enabled ? files.reduce(0) { $0 + Self.size(of: $1) } : 0
    }

    static func size(of sample: SampleFile) -> Int {
        if let data = sample.data { return data.count }
        var info = stat()
        return stat(sample.resolvedPath, &info) == 0 ? Int(info.st_size) : 0
    }

    func fileDone(size: Int) {
        guard enabled else { return }
        let elapsed = Date().timeIntervalSince(started)
        let line: String? = state.withLock { s in
            s.files += 1
            s.bytes += size
            guard elapsed >= 1, elapsed - s.lastShown >= 0.25 else { return nil }
            s.lastShown = elapsed
            s.shown = true
            let fraction = Double(s.bytes) / Double(max(1, totalBytes))
            let left = fraction > 0 ? elapsed * (1 - fraction) / fraction : 0
            return String(format: "\rloading: %d of %d files, %.0f of %.0f MB, %.0f s left  ", s.files, totalFiles,
                          Double(s.bytes) / 1e6, Double(totalBytes) / 1e6, left)
        }
        if let line { FileHandle.standardError.write(Data(line.utf8)) }
    }

    func finish() {
        guard enabled, state.withLock({ $0.shown }) else { return }
        let line = String(format: "\rloaded %d files, %.0f MB, in %.1f s                    \n", totalFiles, Double(totalBytes) / 1e6,
                          Date().timeIntervalSince(started))
        FileHandle.standardError.write(Data(line.utf8))
    }
}
