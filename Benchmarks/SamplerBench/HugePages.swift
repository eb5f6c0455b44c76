import Foundation
import SamplerCore

/// Prototype, not the engine's behaviour: asks the kernel to back the memory of `sounds` with
/// 2 MB pages (`madvise(MADV_COLLAPSE)`, Linux 6.1+, synchronous), so that thousands of voices
/// reading thousands of different sounds stop missing in the TLB. `Sound` allocates its samples
/// with `malloc` today; this measures what a huge-page sound arena would gain. Returns the bytes
/// now on huge pages (from /proc/self/smaps_rollup).
@discardableResult
func collapseToHugePages(_ sounds: some Sequence<Sound>) -> Int {
    let huge = 2 << 20
    var ranges: [(Int, Int)] = []
    for sound in sounds {
        for p in [sound.left, sound.right] {
            let start = Int(bitPattern: p) & ~(huge - 1)
            let end = (Int(bitPattern: p) + sound.frameCount * 4 + huge - 1) & ~(huge - 1)
            ranges.append((start, end))
        }
    }
    ranges.sort { $0.0 < $1.0 }
    var merged: [(Int, Int)] = []
    for r in ranges {
        if let last = merged.last, r.0 <= last.1 { merged[merged.count - 1].1 = max(last.1, r.1) } else { merged.append(r) }
    }
    let collapse: Int32 = 25  // MADV_COLLAPSE
    for (start, end) in merged {
        _ = madvise(UnsafeMutableRawPointer(bitPattern: start), end - start, MADV_HUGEPAGE)
        _ = madvise(UnsafeMutableRawPointer(bitPattern: start), end - start, collapse)
    }
    guard let rollup = try? String(contentsOfFile: "/proc/self/smaps_rollup", encoding: .utf8),
          let line = rollup.split(separator: "\n").first(where: { $0.hasPrefix("AnonHugePages:") }),
          let kb = Int(line.split(separator: " ").dropFirst().first ?? "") else { return 0 }
    return kb * 1024
}
