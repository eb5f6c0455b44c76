// sampler-stream-bench: plays N streamed copies of a long file at once through one AudioSession
// on a JACK server and prints what that costs: resident memory (VmRSS) before the players, once
// they are prepared and after playing, and CPU time (utime + stime from /proc) of the whole
// process and of its disk thread alone, over the measured seconds.
//
//   sampler-stream-bench --server NAME --file PATH --streams N [--seconds 10] [--preload 2]
//                        [--converter medium|best|fastest]  (default medium, as the players)
//
// Prints one line: RESULT streams=… base_kb=… prepared_kb=… playing_kb=… cpu_pct=… disk_pct=…
// underrun_frames=…  (scripts/stream-bench.sh turns those into a table).
import Foundation
import SamplerKit
import SoundFiles

func option(_ name: String) -> String? {
    let arguments = CommandLine.arguments
    guard let i = arguments.firstIndex(of: "--" + name), i + 1 < arguments.count else { return nil }
    return arguments[i + 1]
}

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("sampler-stream-bench: \(message)\n".utf8))
    exit(1)
}

/// VmRSS of this process in kB.
func residentKB() -> Int {
    let status = (try? String(contentsOfFile: "/proc/self/status", encoding: .utf8)) ?? ""
    let line = status.split(separator: "\n").first { $0.hasPrefix("VmRSS:") } ?? ""
    return Int(line.split(separator: " ").dropFirst().first ?? "0") ?? 0
}

/// utime + stime (clock ticks) from a /proc stat file; the fields after the command name.
func cpuTicks(statPath: String) -> Int {
    guard let stat = try? String(contentsOfFile: statPath, encoding: .utf8),
          let close = stat.lastIndex(of: ")") else { return 0 }
    let fields = stat[stat.index(after: close)...].split(separator: " ")
    // After ")": state is field 3 of stat(5); utime and stime are fields 14 and 15.
    guard fields.count > 13 else { return 0 }
    return (Int(fields[11]) ?? 0) + (Int(fields[12]) ?? 0)
}

/// CPU ticks of this process's threads named `name`.
func threadTicks(named name: String) -> Int {
    let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []
    return tasks.reduce(0) { sum, task in
        let comm = (try? String(contentsOfFile: "/proc/self/task/\(task)/comm", encoding: .utf8)) ?? ""
        return comm.trimmingCharacters(in: .whitespacesAndNewlines) == name
            ? sum + cpuTicks(statPath: "/proc/self/task/\(task)/stat") : sum
    }
}

guard let server = option("server"), let file = option("file"), let streams = option("streams").flatMap(Int.init), streams > 0
else { fail("usage: sampler-stream-bench --server NAME --file PATH --streams N [--seconds S] [--preload S] [--converter best|medium|fastest]") }
let seconds = option("seconds").flatMap(Double.init) ?? 10
let preload = option("preload").flatMap(Double.init) ?? 2
var readerOptions = StreamReaderOptions()
switch option("converter") ?? "medium" {
case "best": readerOptions.converter = .bestQuality
case "medium": readerOptions.converter = .mediumQuality
case "fastest": readerOptions.converter = .fastest
case let other: fail("--converter must be best, medium or fastest, got \(other)")
}

var configuration = AudioSession.Configuration()
configuration.name = "stream-bench"
configuration.serverName = server
configuration.connections = []
configuration.maxPlayers = max(streams, 1)
let session: AudioSession
do { session = try AudioSession(configuration: configuration) } catch { fail("\(error)") }
let base = residentKB()

var players: [AudioPlayer] = []
for k in 0..<streams {
    let player: AudioPlayer
    do { player = try AudioPlayer(streamingContentsOf: file, session: session, preloadSeconds: preload, options: readerOptions) } catch {
        fail("\(error)")
    }
    player.numberOfLoops = -1
    player.volume = 1 / Float(streams)
    // Each stream reads its own part of the file.
    player.currentTime = (Double(k) * 37.3).truncatingRemainder(dividingBy: player.duration)
    players.append(player)
}
for player in players where !player.prepareToPlay() { fail("the disk did not fill the rings in time") }
let prepared = residentKB()
let start = session.earliestStartFrame + 4800
for player in players { player.play(atFrame: start) }

// Warm up (page cache, first refills), then measure.
Thread.sleep(forTimeInterval: 2)
let ticksPerSecond = Double(sysconf(Int32(_SC_CLK_TCK)))
let began = Date()
let process0 = cpuTicks(statPath: "/proc/self/stat"), disk0 = threadTicks(named: "sampler.disk")
Thread.sleep(forTimeInterval: seconds)
let elapsed = Date().timeIntervalSince(began)
let process1 = cpuTicks(statPath: "/proc/self/stat"), disk1 = threadTicks(named: "sampler.disk")
let playing = residentKB()
let underruns = players.reduce(0) { $0 + $1.underrunFrameCount }
for player in players { player.stop() }
session.close()

func percent(_ ticks: Int) -> String { String(format: "%.1f", Double(ticks) / ticksPerSecond / elapsed * 100) }
print("RESULT streams=\(streams) base_kb=\(base) prepared_kb=\(prepared) playing_kb=\(playing) "
      + "cpu_pct=\(percent(process1 - process0)) disk_pct=\(percent(disk1 - disk0)) underrun_frames=\(underruns)")
