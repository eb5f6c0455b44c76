import Foundation
import SoundFiles

/// Runs `arguments` under `/usr/bin/time` and returns the wall seconds and peak RSS (MB), or nil
/// when the command failed.
func timedRun(_ arguments: [String]) -> (seconds: Double, megabytes: Double)? {
    let result = capture("/usr/bin/time", ["-f", "TIME %e %M"] + arguments)
    guard result.status == 0, let line = result.output.split(separator: "\n").last(where: { $0.hasPrefix("TIME ") }) else { return nil }
    let parts = line.split(separator: " ")
    guard parts.count == 3, let s = Double(parts[1]), let kb = Double(parts[2]) else { return nil }
    return (s, kb / 1024)
}

/// 9: loading. Debian's Hydrogen GM kit (44.1 kHz samples) rendered for 10 ms at 48 kHz and at
/// its own rate (best of 3: the load is nearly all of it), and a generated piano-sized library
/// (88 keys × 16 velocity layers of stereo 16-bit 44.1 kHz files, `seconds` long each) rendered
/// for 10 s of chords at 48 kHz by the sampler and by sfizz_render (its default: heads preloaded,
/// the rest streamed), page cache warm.
func benchLoad(root: String, samplerPath: String, report: Report, librarySeconds: Double) throws {
    report.section("9. Loading")
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("sampler-bench-load-\(getpid())").path
    try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: directory) }
    var json: [String: Any] = [:]
    let gm = "/usr/share/hydrogen/data/drumkits/GMRockKit/drumkit.xml"
    if FileManager.default.fileExists(atPath: gm), capture(samplerPath, ["import-hydrogen", gm, "--out", directory + "/gm.json"]).status == 0 {
        var best: [Int: Double] = [:]
        for rate in [48_000, 44_100] {
            for _ in 0..<3 {
                guard let run = timedRun([samplerPath, "render", "--patch", directory + "/gm.json", "--duration", "0.01", "--rate", String(rate),
                                          "--out", directory + "/gm.wav"]) else { continue }
                best[rate] = min(best[rate] ?? .infinity, run.seconds)
            }
        }
        if let at48 = best[48_000], let at44 = best[44_100] {
            report.line(String(format: "  Hydrogen GM kit (11 MB, 44.1 kHz), load and render 10 ms: %.2f s at 48 kHz, %.2f s at 44.1 kHz (best of 3)", at48, at44))
            report.target("GM kit load at 48 kHz", value: String(format: "%.2f s", at48), target: "< 0.5 s", met: at48 < 0.5)
            json["gmKit48k"] = round(at48, 3)
            json["gmKit44k"] = round(at44, 3)
        }
    } else {
        report.line("  Hydrogen GM kit: n/a (hydrogen's drumkits are not installed)")
    }

    let bytes = try writePianoLibrary(to: directory, seconds: librarySeconds)
    // Chords: 4 notes every half second for 10 s, at varied velocities.
    var notes: [(Double, Int, Int)] = []
    for step in 0..<20 {
        for k in 0..<4 { notes.append((Double(step) * 0.5, 36 + (step * 5 + k * 7) % 60, 20 + (step * 13 + k * 29) % 100)) }
    }
    try writeChords(notes, to: directory + "/chords.mid")
    _ = capture("/bin/sh", ["-c", "cat \(directory)/lib/*.wav > /dev/null"])
    let mb = Double(bytes) / 1e6
    let samplerRun = [samplerPath, "render", "--patch", directory + "/piano.sfz", "--midi", directory + "/chords.mid", "--duration", "10",
                      "--out", directory + "/s.wav"]
    let sfizzPath = root + "/.build/sfizz/sfizz_render"
    let sfizzRun: [String]? = FileManager.default.isExecutableFile(atPath: sfizzPath)
        ? [sfizzPath, "--sfz", directory + "/piano.sfz", "--midi", directory + "/chords.mid", "--wav", directory + "/z.wav", "--samplerate", "48000"]
        : nil
    // Best of three, the two programs taking turns (a run's time moves by tens of percent here).
    func best(_ a: (seconds: Double, megabytes: Double)?, _ b: (seconds: Double, megabytes: Double)?) -> (seconds: Double, megabytes: Double)? {
        guard let a, let b else { return a ?? b }
        return (min(a.seconds, b.seconds), max(a.megabytes, b.megabytes))
    }
    var sampler: (seconds: Double, megabytes: Double)?, sfizz: (seconds: Double, megabytes: Double)?
    for _ in 0..<3 {
        sampler = best(sampler, timedRun(samplerRun))
        if let sfizzRun { sfizz = best(sfizz, timedRun(sfizzRun)) }
    }
    // Cold: the page cache dropped before each (where this machine lets it be: root, a VM).
    var cold: (sampler: (seconds: Double, megabytes: Double)?, sfizz: (seconds: Double, megabytes: Double)?)?
    if FileManager.default.isWritableFile(atPath: "/proc/sys/vm/drop_caches") {
        func dropped() -> Bool { capture("/bin/sh", ["-c", "sync && echo 3 > /proc/sys/vm/drop_caches"]).status == 0 }
        if dropped() {
            let s = timedRun(samplerRun)
            cold = (s, sfizzRun != nil && dropped() ? timedRun(sfizzRun!) : nil)
        }
    }
    func text(_ r: (seconds: Double, megabytes: Double)?) -> String { r.map { String(format: "%.2f s, %.0f MB peak", $0.seconds, $0.megabytes) } ?? "failed" }
    report.line(String(format: "  library of 1,408 files (%.0f MB, 44.1 kHz), 10 s of chords at 48 kHz, best of 3: sampler ", mb) + text(sampler)
        + "; sfizz_render " + (sfizz != nil ? text(sfizz) : "n/a"))
    if let cold {
        report.line("  the same, page cache dropped before each: sampler " + text(cold.sampler) + "; sfizz_render " + (sfizzRun != nil ? text(cold.sfizz) : "n/a"))
    } else {
        report.line("  cold cache: n/a (this machine does not let the page cache be dropped: /proc/sys/vm/drop_caches)")
    }
    if let sampler, let sfizz {
        report.target("1,408-file library: time vs sfizz_render", value: String(format: "%.2f×", sampler.seconds / sfizz.seconds), target: "≤ 1×",
                      met: sampler.seconds <= sfizz.seconds)
        report.target("1,408-file library: peak RSS vs sfizz_render", value: String(format: "%.2f×", sampler.megabytes / sfizz.megabytes), target: "≤ 1×",
                      met: sampler.megabytes <= sfizz.megabytes)
        json["library"] = ["megabytes": round(mb, 0), "samplerSeconds": round(sampler.seconds, 2), "samplerMB": round(sampler.megabytes, 0),
                           "sfizzSeconds": round(sfizz.seconds, 2), "sfizzMB": round(sfizz.megabytes, 0)]
    }
    // The same library with every sample looping forever on its middle half (loop_continuous, a
    // 0.3 s release): what sustained instruments do. Printed, not a target.
    let region = try String(contentsOfFile: directory + "/piano.sfz", encoding: .utf8)
    let frames = Int(librarySeconds * 44_100)
    let loopSuffix = " loop_mode=loop_continuous loop_start=\(frames / 4) loop_end=\(3 * frames / 4 - 1) ampeg_release=0.3"
    try (region.split(separator: "\n").map { $0 + loopSuffix }.joined(separator: "\n") + "\n")
        .write(toFile: directory + "/looped.sfz", atomically: true, encoding: .utf8)
    let loopedRun = samplerRun.map { $0 == directory + "/piano.sfz" ? directory + "/looped.sfz" : $0 }
    let loopedSfizz = sfizzRun?.map { $0 == directory + "/piano.sfz" ? directory + "/looped.sfz" : $0 }
    var looped: (seconds: Double, megabytes: Double)?, loopedReference: (seconds: Double, megabytes: Double)?
    for _ in 0..<3 {
        looped = best(looped, timedRun(loopedRun))
        if let loopedSfizz { loopedReference = best(loopedReference, timedRun(loopedSfizz)) }
    }
    report.line("  the same library looped (loop_continuous on each sample's middle half), best of 3: sampler " + text(looped)
        + "; sfizz_render " + (loopedSfizz != nil ? text(loopedReference) : "n/a"))
    if let looped {
        json["loopedLibrary"] = ["samplerSeconds": round(looped.seconds, 2), "samplerMB": round(looped.megabytes, 0),
                                 "sfizzSeconds": loopedReference.map { round($0.seconds, 2) } ?? 0,
                                 "sfizzMB": loopedReference.map { round($0.megabytes, 0) } ?? 0]
    }
    report.set("load", json)
}

/// The piano-sized library in `directory`: 1,408 files (88 keys × 16 velocity layers of stereo
/// 16-bit 44.1 kHz files, `seconds` long, each a decaying tone) in `lib/`, mapped by `piano.sfz`.
/// Returns the files' bytes.
func writePianoLibrary(to directory: String, seconds: Double) throws -> Int {
    let frames = Int(seconds * 44_100)
    var regions: [String] = []
    var bytes = 0
    try FileManager.default.createDirectory(atPath: directory + "/lib", withIntermediateDirectories: true)
    for key in 21...108 {
        let frequency = 440 * Double.pow(2, Double(key - 69) / 12)
        for layer in 0..<16 {
            let level = Float(layer + 1) / 20
            let tone = (0..<frames).map { i in level * Float(sin(2 * Double.pi * frequency * Double(i) / 44_100) * exp(-Double(i) / 44_100)) }
            let name = "k\(key)v\(layer).wav"
            try WAVFileWriter.write(path: directory + "/lib/" + name, channels: [tone, tone], sampleRate: 44_100, format: .pcm16)
            bytes += 44 + frames * 4
            regions.append("<region> sample=lib/\(name) key=\(key) lovel=\(layer * 8) hivel=\(layer * 8 + 7)")
        }
    }
    try (regions.joined(separator: "\n") + "\n").write(toFile: directory + "/piano.sfz", atomically: true, encoding: .utf8)
    return bytes
}

/// `groove.mid` in `directory`, `seconds` long, for the library's live run: chords of four notes
/// every quarter second (16 notes a second, each held 0.2 s, on keys and velocities that move
/// across the library), the sustain pedal down throughout but for a tenth of a second every
/// four seconds. With 4 s samples about 64 voices sound at once. Returns its note count.
@discardableResult
func writeGroove(to directory: String, seconds: Double) throws -> Int {
    var events: [(Double, [UInt8])] = []
    var t = 0.0, step = 0
    while t < seconds {
        for k in 0..<4 {
            let note = UInt8(21 + (step * 7 + k * 19) % 88), velocity = UInt8(8 + (step * 13 + k * 29) % 119)
            events.append((t, [0x90, note, velocity]))
            events.append((t + 0.2, [0x80, note, 0]))
        }
        step += 1
        t = Double(step) * 0.25
    }
    var pedal = 0.0
    while pedal < seconds {
        events.append((pedal + 0.01, [0xB0, 64, 127]))
        events.append((pedal + 3.9, [0xB0, 64, 0]))
        pedal += 4
    }
    try writeMIDI(events, to: directory + "/groove.mid")
    return 4 * step
}

/// A type-0 Standard MIDI File of (seconds, note, velocity) note-ons, each held 0.4 s, at 120 bpm
/// and 480 ticks a quarter note.
func writeChords(_ notes: [(Double, Int, Int)], to path: String) throws {
    var events: [(Double, [UInt8])] = []
    for (t, n, v) in notes {
        events.append((t, [0x90, UInt8(n), UInt8(v)]))
        events.append((t + 0.4, [0x80, UInt8(n), 0]))
    }
    try writeMIDI(events, to: path)
}

/// A type-0 Standard MIDI File of (seconds, message) events at 120 bpm and 480 ticks a quarter
/// note.
func writeMIDI(_ timed: [(Double, [UInt8])], to path: String) throws {
    var events = timed.map { (tick: Int(($0.0 * 960).rounded()), bytes: $0.1) }
    events.sort { $0.tick < $1.tick }
    var track: [UInt8] = []
    var last = 0
    func variable(_ x: Int) -> [UInt8] {
        var out = [UInt8(x & 0x7F)], x = x >> 7
        while x > 0 { out.insert(UInt8(x & 0x7F) | 0x80, at: 0); x >>= 7 }
        return out
    }
    for e in events {
        track += variable(e.tick - last) + e.bytes
        last = e.tick
    }
    track += [0, 0xFF, 0x2F, 0]
    var file: [UInt8] = Array("MThd".utf8) + [0, 0, 0, 6, 0, 0, 0, 1, 0x01, 0xE0]
    file += Array("MTrk".utf8) + [UInt8(track.count >> 24), UInt8(track.count >> 16 & 0xFF), UInt8(track.count >> 8 & 0xFF), UInt8(track.count & 0xFF)]
    file += track
    try Data(file).write(to: URL(fileURLWithPath: path))
}
