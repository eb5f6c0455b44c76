// `make bench`: the engine's performance measurements, release-built, printed as a table and
// written to benchmarks/results.json. Exits non-zero if the render path allocated (or a check
// failed). Run from the package root; `--quick` for a short smoke run.
@preconcurrency import Glibc
import Foundation
import MallocInterposerSwift

setvbuf(stdout, nil, _IOLBF, 0)
let arguments = CommandLine.arguments.dropFirst()
let quick = arguments.contains("--quick")
func option(_ name: String) -> String? {
    guard let i = arguments.firstIndex(of: name), arguments.index(after: i) < arguments.endIndex else { return nil }
    return arguments[arguments.index(after: i)]
}
let root = FileManager.default.currentDirectoryPath
let outputPath = option("--out") ?? root + "/benchmarks/results.json"
let executable = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
let samplerPath = option("--sampler") ?? URL(fileURLWithPath: executable).deletingLastPathComponent().appendingPathComponent("sampler").path

guard FileManager.default.fileExists(atPath: root + "/Patches/drums.json") else {
    FileHandle.standardError.write("sampler-bench: run from the package root (Patches/drums.json not found in \(root))\n".data(using: .utf8)!)
    exit(2)
}

// `--write-library DIR [--seconds S]`: only write the piano-sized library (`piano.sfz`, 1,408
// files of 4 s) and an S-second groove for it (`groove.mid`, default 60) into DIR, for
// scripts/library-live-bench.sh.
if let directory = option("--write-library") {
    do {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let bytes = try writePianoLibrary(to: directory, seconds: 4)
        let notes = try writeGroove(to: directory, seconds: option("--seconds").flatMap(Double.init) ?? 60)
        print(String(format: "wrote %@/piano.sfz (1,408 files, %.0f MB) and groove.mid (%d notes)", directory, Double(bytes) / 1e6, notes))
        print("NOTES \(notes)")
        exit(0)
    } catch {
        FileHandle.standardError.write("sampler-bench: \(error)\n".data(using: .utf8)!)
        exit(1)
    }
}

let report = Report()
let pool = SoundPool()

// `--row JOB:SOURCE:VOICES`: one row of the mixer table, measured in this process (the full run
// measures each row in several fresh processes this way).
if let text = option("--row") {
    guard let (variant, kind, n) = parseMixerRow(text) else {
        FileHandle.standardError.write("sampler-bench: --row wants JOB:SOURCE:VOICES (e.g. ramp:mono:64), not \(text)\n".data(using: .utf8)!)
        exit(2)
    }
    let r = measureMixerRow(pool: pool, variant: variant, kind: kind, voices: n)
    print("ROW \(r.ratio) \(r.engine) \(r.reference) \(r.agreement)")
    exit(0)
}

// `--profile N [mono|stereo] [ramp|streamed|cc|ccglide] [reference] [--seconds S]`: only render N voices back to back
// for about S seconds (default 10; to run under `perf record`).
// `--breakdown N [mono|stereo] [ramp]`: engine vs its kernels alone vs C, interleaved.
if let n = option("--breakdown").flatMap(Int.init) {
    let kind: SourceKind = arguments.contains("stereo") ? .stereo : .mono
    // `heap`: sounds on the heap (4 KiB pages) instead of the loaders' huge-page memory.
    let w = MixWorkload(pool: arguments.contains("heap") ? SoundPool(memory: nil) : pool, voices: n, kind: kind,
                        fades: arguments.contains("ramp"), frameCount: 128)
    let b = breakdown(w)
    print(String(format: "%5d %@ engine %.3f  kernels-only %.3f  C %.3f  ns/voice-frame  (engine/C %.2f, kernels/C %.2f)",
                 n, kind.rawValue, b.engine, b.kernels, b.reference, b.engine / b.reference, b.kernels / b.reference))
    exit(0)
}
// `--outputs N [mono|stereo] [--count K]`: N voices into the main mix alone vs spread over K
// outputs (default 4), interleaved: the mixing cost per voice with outputs.
if let n = option("--outputs").flatMap(Int.init) {
    let kind: SourceKind = arguments.contains("stereo") ? .stereo : .mono
    let k = max(2, min(64, option("--count").flatMap(Int.init) ?? 4))
    let r = outputsComparison(pool: pool, voices: n, kind: kind, outputs: k)
    print(String(format: "%5d %@ main mix only %.3f  spread over %d outputs %.3f  ns/voice-frame  (ratio %.3f)",
                 n, kind.rawValue, r.main, k, r.spread, r.spread / r.main))
    exit(0)
}
// `--fixed`: ns per 128-frame period at 0, 1 and 8 voices, engine and C, fastest of 30 batches.
// `--fixed 64,512`: those voice counts instead.
if arguments.contains("--fixed") {
    let counts = option("--fixed").map { $0.split(separator: ",").compactMap { Int($0) } }.flatMap { $0.isEmpty ? nil : $0 } ?? [0, 1, 8]
    for kind in SourceKind.allCases {
        for n in counts {
            let r = fixedCost(pool: pool, voices: n, kind: kind)
            print(String(format: "%2d %@ voices: engine %.1f ns  C %.1f ns per period  (engine − C %.1f ns, engine/C %.2f)",
                         n, kind.rawValue, r.engine, r.reference, r.engine - r.reference, r.engine / r.reference))
        }
    }
    exit(0)
}
if let n = option("--profile").flatMap(Int.init) {
    let kind: SourceKind = arguments.contains("stereo") ? .stereo : .mono
    let streamed = arguments.contains("streamed")
    let w = MixWorkload(pool: pool, voices: n, kind: kind, fades: arguments.contains("ramp"),
                        rate: arguments.contains("varispeed") ? 1.5 : 1, tails: arguments.contains("tails"), streamed: streamed,
                        controlled: arguments.contains("cc") || arguments.contains("ccglide"),
                        glideFrames: arguments.contains("ccglide") ? 48 : 0, frameCount: 128)
    let seconds = option("--seconds").flatMap(Double.init) ?? 10
    let periods = max(1000, Int(seconds * 1e9) / (n * 128))
    let t0 = nowNanoseconds()
    if arguments.contains("reference") {
        for i in 0..<periods {
            w.renderReference()
            if streamed, (i + 1) % w.maxPeriodsPerBatch == 0 { w.refillReference() }
        }
    } else {
        let batch = min(256, w.maxPeriodsPerBatch)
        for i in 0..<periods {
            w.renderEngine()
            if (i + 1) % batch == 0 { w.drainEvents() }
        }
    }
    print(String(format: "%.3f ns per voice-frame", Double(nowNanoseconds() - t0) / Double(periods * n * 128)))
    exit(0)
}
let started = Date()
var machine: [String: Any] = ["cores": ProcessInfo.processInfo.activeProcessorCount]
let cpu = CPUDescription.read()
machine["cpu"] = cpu.summary
machine["cpuModelName"] = cpu.modelName
machine["cpuFamily"] = cpu.family
machine["cpuModel"] = cpu.model
machine["cpuFlags"] = cpu.flagsThatMatter
// The Swift build's CPU (`-target-cpu`, from scripts/bench.sh).
machine["build"] = option("--build-flags") ?? "unknown"

var load = [Double](repeating: 0, count: 3)
getloadavg(&load, 3)
machine["loadAverageAtStart"] = load.map { round($0, 2) }
report.set("machine", machine)
report.set("date", ISO8601DateFormatter().string(from: started))
print("sampler-bench: \(cpu.summary), \(machine["cores"]!) cores, build \(machine["build"]!), load average \(String(format: "%.2f", load[0]))"
    + (quick ? " (quick run)" : ""))

// `--only a,b`: run only these parts (alloc, mixer, budget, catchup, paced, prototypes, offline, load, sox, metronome).
let only = option("--only").map { Set($0.split(separator: ",").map(String.init)) }
func runs(_ part: String) -> Bool { only?.contains(part) ?? true }

var allocations = runs("alloc") ? benchAllocations(pool: pool, report: report) : 0
// `--voices 1,8`: only these voice counts in the mixer table; `--jobs plain,ramp`: only these jobs.
let voiceCounts = option("--voices").map { $0.split(separator: ",").compactMap { Int($0) } } ?? (quick ? [1, 64, 512] : [1, 8, 64, 512, 2048])
let jobs = option("--jobs").map { Set($0.split(separator: ",").map(String.init)) }
// `--processes K`: fresh processes per mixer row (default 5; 3 with --quick; 1 measures in this one).
let processes = max(1, option("--processes").flatMap(Int.init) ?? (quick ? 3 : 5))
if runs("mixer") {
    benchMixer(pool: pool, report: report, voiceCounts: voiceCounts, jobs: jobs, processes: processes, executable: executable)
}
if runs("budget") && !quick { benchVoicesPerBudget(pool: pool, report: report) }
if runs("catchup") { benchCatchUp(pool: pool, report: report, trials: quick ? 6 : 21) }
if runs("paced") { allocations += benchPaced(pool: pool, report: report, periods: quick ? 300 : 3000) }
// Last of the mixer measurements: it moves the sound pool's memory to huge pages.
if runs("prototypes") { benchPrototypes(pool: pool, report: report, quick: quick) }
if runs("offline") {
    do { try benchOffline(root: root, samplerPath: samplerPath, report: report) } catch { report.fail("offline render: \(error)") }
}
if runs("load") {
    // `--library-seconds S`: each library file's length (4 s by default: 1.08 GB; 1 with --quick).
    let seconds = option("--library-seconds").flatMap(Double.init) ?? (quick ? 1 : 4)
    do { try benchLoad(root: root, samplerPath: samplerPath, report: report, librarySeconds: seconds) } catch { report.fail("loading: \(error)") }
}
if runs("sox") {
    do { try benchSox(report: report) } catch { report.fail("sox comparison: \(error)") }
}
if arguments.contains("--skip-metronome") {
    report.section("6. Metronome CPU: skipped (--skip-metronome)")
} else if runs("metronome") {
    do { try benchMetronome(samplerPath: samplerPath, report: report, seconds: quick ? 5 : 30) } catch {
        report.fail("metronome comparison: \(error)")
    }
}

report.section("3. (summary) allocations in the render path, all counted periods: \(allocations)")
report.target("allocations per period (render path)", value: "\(allocations) in all counted periods", target: "0", met: allocations == 0)
if allocations != 0 { report.fail("the render path allocated \(allocations) times") }
report.printTargets()
getloadavg(&load, 3)
print(String(format: "\nload average at the end: %.2f (this machine has %d cores; other work running beside the benchmark makes the numbers noisier)",
             load[0], ProcessInfo.processInfo.activeProcessorCount))
machine["loadAverageAtEnd"] = load.map { round($0, 2) }
report.set("machine", machine)
report.set("seconds", round(Date().timeIntervalSince(started), 1))
do {
    try report.write(to: outputPath)
    print("\nwrote \(outputPath) (\(String(format: "%.0f", Date().timeIntervalSince(started))) s)")
} catch {
    report.fail("could not write \(outputPath): \(error)")
}
exit(report.failures.isEmpty ? 0 : 1)
