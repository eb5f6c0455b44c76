import Foundation
import ProgramHost
import SamplerCore
import Sync

/// A key the metronome understands.
package enum MetronomeKey: Equatable, Sendable {
    /// Space: start/stop.
    case startStop
    /// +/− (and →/←): one bpm; ↑/↓: ten.
    case tempo(Double)
    /// t: tap tempo.
    case tap
    /// q or Escape: quit.
    case quit

    /// The keys in `bytes` as typed on a terminal (arrow keys arrive as `ESC [ A…D`).
    package static func parse(_ bytes: [UInt8]) -> [MetronomeKey] {
        var keys: [MetronomeKey] = []
        var i = 0
        while i < bytes.count {
            let b = bytes[i]
            if b == 0x1B {
                if i + 2 < bytes.count, bytes[i + 1] == UInt8(ascii: "[") {
                    switch bytes[i + 2] {
                    case UInt8(ascii: "A"): keys.append(.tempo(10))
                    case UInt8(ascii: "B"): keys.append(.tempo(-10))
                    case UInt8(ascii: "C"): keys.append(.tempo(1))
                    case UInt8(ascii: "D"): keys.append(.tempo(-1))
                    default: break
                    }
                    i += 3
                    continue
                }
                keys.append(.quit)
                i += 1
                continue
            }
            switch b {
            case UInt8(ascii: " "): keys.append(.startStop)
            case UInt8(ascii: "+"), UInt8(ascii: "="): keys.append(.tempo(1))
            case UInt8(ascii: "-"), UInt8(ascii: "_"): keys.append(.tempo(-1))
            case UInt8(ascii: "t"), UInt8(ascii: "T"): keys.append(.tap)
            case UInt8(ascii: "q"), UInt8(ascii: "Q"): keys.append(.quit)
            default: break
            }
            i += 1
        }
        return keys
    }
}

/// The terminal on standard input in non-canonical, no-echo mode, read without blocking; the
/// previous mode is restored by `restore()` (and at deinit). Signals (Ctrl-C) still work.
/// Control thread only.
final class TerminalKeys {
    private var saved = termios()
    private var active = false

    /// Nil when standard input is not a terminal, unless it is a pipe (or FIFO): a script can then
    /// type keys (`sampler metronome --keys-from-stdin`); it is read without blocking, unchanged.
    init?() {
        if isatty(STDIN_FILENO) != 1 {
            var info = stat()
            guard fstat(STDIN_FILENO, &info) == 0, info.st_mode & S_IFMT == S_IFIFO else { return nil }
            let flags = fcntl(STDIN_FILENO, F_GETFL)
            guard flags >= 0, fcntl(STDIN_FILENO, F_SETFL, flags | O_NONBLOCK) == 0 else { return nil }
            return
        }
        guard tcgetattr(STDIN_FILENO, &saved) == 0 else { return nil }
        var raw = saved
        raw.c_lflag &= ~tcflag_t(ICANON | ECHO)
        withUnsafeMutableBytes(of: &raw.c_cc) { cc in
            cc[Int(VMIN)] = 0
            cc[Int(VTIME)] = 0
        }
        guard tcsetattr(STDIN_FILENO, TCSANOW, &raw) == 0 else { return nil }
        active = true
    }

    /// The keys typed since the last call (never blocks).
    func read() -> [MetronomeKey] {
        var buffer = [UInt8](repeating: 0, count: 64)
        let n = buffer.withUnsafeMutableBytes { Glibc.read(STDIN_FILENO, $0.baseAddress, 64) }
        return n > 0 ? MetronomeKey.parse(Array(buffer[0..<n])) : []
    }

    func restore() {
        guard active else { return }
        active = false
        tcsetattr(STDIN_FILENO, TCSANOW, &saved)
    }

    deinit { restore() }
}

/// Tap tempo: the mean interval of the last taps (up to five, each within two seconds of the one
/// before) as a tempo in beats per minute.
struct TapTempo {
    private var taps: [Double] = []

    /// Records a tap at `seconds` (a monotonic clock); returns the tempo once there are two taps.
    mutating func tap(at seconds: Double) -> Double? {
        if let last = taps.last, seconds - last > 2 { taps.removeAll() }
        taps.append(seconds)
        if taps.count > 5 { taps.removeFirst() }
        guard taps.count >= 2 else { return nil }
        return 60 * Double(taps.count - 1) / (taps.last! - taps.first!)
    }
}
