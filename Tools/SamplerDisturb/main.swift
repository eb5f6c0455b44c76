// sampler-disturb: a JACK client that makes the clients downstream of it late on purpose, for
// the fault-injection tests.
//
//   sampler-disturb --server NAME --to CLIENT:midi_in [--sleep PERIODS] [--every CYCLES]
//                   [--name N] [--seconds S] [--notes PER_CYCLE] [--hang-after CYCLES]
//
// Its `midi_out` port is connected to --to, so JACK runs it before that client in every cycle.
// Every --every cycles (default 150) its process callback sleeps --sleep periods (default 1.5),
// so the client downstream runs late: on an asynchronous server it misses cycles and reads a
// later cycle's time; on a synchronous one the whole cycle is late. With --notes P (0…1) it also
// writes, in each cycle with probability P, a note-on (GM drum notes 35…81, random velocity, at
// a random offset in the period) for the soak. With --hang-after N its process callback never
// returns from cycle N on (a hung client: JACK stops running every client downstream of it; on
// SIGTERM the program then ends at once, without deactivating). Prints "ready" once
// connected, runs until SIGTERM/SIGINT (or --seconds), then prints "disturbed N notes M".
import CJACK
import Foundation
import Synchronization
import ToolSupport

/// `@unchecked Sendable` by contract: `port`, `sleepMicroseconds`, `every`, `noteChance` and `hangAfter` are set
/// by the main thread before `jack_activate`; after that `cycle` and `random` are touched only by
/// the process thread, and the main thread reads only the atomics `disturbances` and `notes`.
final class Disturber: @unchecked Sendable {
    var port: OpaquePointer?
    var sleepMicroseconds: UInt32 = 0
    var every = 150
    var cycle = 0
    /// Probability of a note-on per cycle (0: none).
    var noteChance = 0.0
    /// The cycle from which the callback never returns (0: never).
    var hangAfter = 0
    var random: UInt64 = 0x9E37_79B9_7F4A_7C15
    let disturbances = Atomic<Int>(0)
    let notes = Atomic<Int>(0)

    /// xorshift64*: no allocation, no lock, on the process thread.
    func next() -> UInt64 {
        random ^= random >> 12; random ^= random << 25; random ^= random >> 27
        return random &* 0x2545_F491_4F6C_DD1D
    }

    func process(_ n: UInt32) -> Int32 {
        guard let port, let buffer = jack_port_get_buffer(port, n) else { return 0 }
        jack_midi_clear_buffer(buffer)
        cycle += 1
        if hangAfter > 0 && cycle >= hangAfter {
            while true { usleep(100_000) }
        }
        if noteChance > 0, Double(next() % 1_000_000) < noteChance * 1_000_000 {
            let event: (UInt8, UInt8, UInt8) = (0x99, UInt8(35 + next() % 47), UInt8(1 + next() % 127))
            withUnsafeBytes(of: event) { bytes in
                _ = jack_midi_event_write(buffer, UInt32(next() % UInt64(max(n, 1))), bytes.baseAddress!.assumingMemoryBound(to: UInt8.self), 3)
            }
            notes.add(1, ordering: .relaxed)
        }
        if cycle % every == 0 {
            usleep(sleepMicroseconds)
            disturbances.add(1, ordering: .relaxed)
        }
        return 0
    }
}

/// JACK's process callback. A function, not a closure in this file's top-level code: such a
/// closure would be isolated to the main actor (Swift 6), and JACK calls it on its own thread.
func processCallback(_ n: UInt32, _ arg: UnsafeMutableRawPointer?) -> Int32 {
    Unmanaged<Disturber>.fromOpaque(arg!)._withUnsafeGuaranteedRef { $0.process(n) }
}

func fail(_ message: String) -> Never { toolFail("sampler-disturb", message) }

var server: String?
var target = ""
var sleepPeriods = 1.5
var every = 150
var clientName = "disturb"
var seconds = Double.infinity
var noteChance = 0.0
var hangAfter = 0
var args = CommandLine.arguments.dropFirst().makeIterator()
while let a = args.next() {
    switch a {
    case "--server": server = args.next()
    case "--to": target = args.next() ?? ""
    case "--sleep": sleepPeriods = Double(args.next() ?? "") ?? -1
    case "--every": every = Int(args.next() ?? "") ?? 0
    case "--name": clientName = args.next() ?? "disturb"
    case "--seconds": seconds = Double(args.next() ?? "") ?? -1
    case "--notes": noteChance = Double(args.next() ?? "") ?? -1
    case "--hang-after": hangAfter = Int(args.next() ?? "") ?? -1
    default: fail("unknown option \(a)")
    }
}
guard !target.isEmpty, sleepPeriods >= 0, sleepPeriods <= 100, every > 0, seconds > 0,
      noteChance >= 0, noteChance <= 1, hangAfter >= 0 else {
    fail("usage: --server NAME --to CLIENT:midi_in [--sleep PERIODS] [--every CYCLES] [--seconds S] [--notes 0…1] [--hang-after CYCLES]")
}

let stopSignals = StopSignals.block()
let jack = ToolClient(tool: "sampler-disturb", name: clientName, server: server)
let client = jack.client
let disturber = Disturber()
disturber.port = jack.register("midi_out", type: JACK_DEFAULT_MIDI_TYPE, flags: JackPortIsOutput)
let periodSeconds = Double(jack_get_buffer_size(client)) / Double(jack_get_sample_rate(client))
disturber.sleepMicroseconds = UInt32(sleepPeriods * periodSeconds * 1_000_000)
disturber.every = every
disturber.noteChance = noteChance
disturber.hangAfter = hangAfter
jack_set_process_callback(client, processCallback, Unmanaged.passUnretained(disturber).toOpaque())
jack.activate()
guard jack.waitForPort(target, tries: 1000) else { fail("no port \(target)") }
let result = jack.connect(from: jack.name + ":midi_out", to: target, tries: 200)
guard result == 0 else { fail("cannot connect to \(target) (error \(result))") }
print("ready"); fflush(nil)

stopSignals.wait(seconds: seconds)
// A hung process thread would hold jack_deactivate: end at once (the server drops the client).
if hangAfter > 0 { _exit(0) }
jack.close()
print("disturbed \(disturber.disturbances.load(ordering: .relaxed)) notes \(disturber.notes.load(ordering: .relaxed))"); fflush(nil)
