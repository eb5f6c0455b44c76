import Foundation

/// Bytes of this process's anonymous memory on 2 MB pages (from /proc/self/smaps_rollup).
func anonymousHugePageBytes() -> Int {
    guard let rollup = try? String(contentsOfFile: "/proc/self/smaps_rollup", encoding: .utf8),
          let line = rollup.split(separator: "\n").first(where: { $0.hasPrefix("AnonHugePages:") }),
          let kb = Int(line.split(separator: " ").dropFirst().first ?? "") else { return 0 }
    return kb * 1024
}
