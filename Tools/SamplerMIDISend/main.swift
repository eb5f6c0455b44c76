// sampler-midi-send: an independent JACK client that sends MIDI note-ons at chosen frames, for
// the tests of the sampler's `midi_in` port.
//
//   sampler-midi-send --server NAME --to CLIENT:midi_in --offsets 0,17,255 [--notes 36,38,…]
//                     [--velocity V] [--gap PERIODS] [--name N] [--messages 90:2A:64,B0:04:7F,…]
//
// It connects its `midi_out` port to --to, prints "ready", then sends note i (default 36) with
// velocity V (default 100) at frame offset i inside one period, one note every --gap periods
// (default 8). For each it prints "sent NOTE at FRAME": the absolute frame of the note (JACK's
// 32-bit frame time of the period, zero-extended, plus the offset), and "done" at the end.
// With --messages, message i (hex bytes joined by ':', any channel message: controllers, pitch
// bend, pressure, notes) is sent instead of note i, and printed as "sent 90:2A:64 at FRAME".
import CJACK
import Foundation
import Synchronization
import ToolSupport

/// `@unchecked Sendable` by contract: `client` and `port` are set before `jack_activate`, the rest
/// in `init`; `cycle`, `sent` and `frames` are written only by the process thread, which stops once
/// it has stored `done` (releasing); the main thread reads `frames` only after it has seen `done`
/// (acquiring) and closed the client.
final class Sender: @unchecked Sendable {
    var client: OpaquePointer?
    var port: OpaquePointer?
    let offsets: [UInt32]
    let notes: [UInt8]
    /// Whole messages, sent instead of notes when not empty.
    let messages: [[UInt8]]
    let velocity: UInt8
    let gap: Int
    /// Frames the notes were sent on, written by the process thread before `done`.
    let frames: UnsafeMutablePointer<Int64>
    var sent = 0
    var cycle = 0
    let armed = Atomic<Bool>(false)
    let done = Atomic<Bool>(false)

    init(offsets: [UInt32], notes: [UInt8], messages: [[UInt8]], velocity: UInt8, gap: Int) {
        self.offsets = offsets
        self.messages = messages
        self.notes = notes
        self.velocity = velocity
        self.gap = gap
        frames = .allocate(capacity: max(1, offsets.count))
    }

    func process(_ n: UInt32) -> Int32 {
        guard let client, let port, let buffer = jack_port_get_buffer(port, n) else { return 0 }
        // An output MIDI buffer must be cleared every cycle, sent to or not.
        jack_midi_clear_buffer(buffer)
        guard armed.load(ordering: .acquiring), !done.load(ordering: .relaxed) else { return 0 }
        cycle += 1
        guard cycle % gap == 0 else { return 0 }
        let offset = min(offsets[sent], n - 1)
        var message: (UInt8, UInt8, UInt8) = (0x90, notes[sent % notes.count], velocity)
        var length = 3
        if !messages.isEmpty {
            let m = messages[sent % messages.count]
            message = (m[0], m.count > 1 ? m[1] : 0, m.count > 2 ? m[2] : 0)
            length = m.count
        }
        let written = withUnsafeBytes(of: &message) {
            jack_midi_event_write(buffer, offset, $0.baseAddress!.assumingMemoryBound(to: UInt8.self), length)
        }
        frames[sent] = written == 0 ? Int64(jack_last_frame_time(client)) + Int64(offset) : -1
        sent += 1
        if sent == offsets.count { done.store(true, ordering: .releasing) }
        return 0
    }
}

/// JACK's process callback. A function, not a closure in this file's top-level code: such a
/// closure would be isolated to the main actor (Swift 6), and JACK calls it on its own thread.
func processCallback(_ n: UInt32, _ arg: UnsafeMutableRawPointer?) -> Int32 {
    Unmanaged<Sender>.fromOpaque(arg!)._withUnsafeGuaranteedRef { $0.process(n) }
}

func fail(_ message: String) -> Never { toolFail("sampler-midi-send", message) }

var server: String?
var clientName = "midisend"
var destination = ""
var offsets: [UInt32] = []
var notes: [UInt8] = [36]
var messages: [[UInt8]] = []
var velocity: UInt8 = 100
var gap = 8
var args = CommandLine.arguments.dropFirst().makeIterator()
while let a = args.next() {
    switch a {
    case "--server": server = args.next()
    case "--to": destination = args.next() ?? ""
    case "--offsets": offsets = (args.next() ?? "").split(separator: ",").compactMap { UInt32($0) }
    case "--notes": notes = (args.next() ?? "").split(separator: ",").compactMap { UInt8($0) }.filter { $0 < 128 }
    case "--velocity": velocity = UInt8(args.next() ?? "").map { min(127, max(1, $0)) } ?? 100
    case "--gap": gap = max(1, Int(args.next() ?? "") ?? 8)
    case "--messages":
        messages = (args.next() ?? "").split(separator: ",").map { $0.split(separator: ":").compactMap { UInt8($0, radix: 16) } }
        if messages.contains(where: { !(1...3).contains($0.count) || $0[0] < 0x80 || $0[0] >= 0xF0 }) {
            fail("--messages: each message is 1 to 3 hex bytes joined by ':', a channel status first")
        }
    case "--name": clientName = args.next() ?? "midisend"
    default: fail("unknown option \(a)")
    }
}
guard !destination.isEmpty, !offsets.isEmpty, !notes.isEmpty, offsets.count <= 10_000 else {
    fail("usage: --server NAME --to CLIENT:midi_in --offsets 0,17,255 [--notes 36,38] [--velocity V] [--gap PERIODS]")
}

let jack = ToolClient(tool: "sampler-midi-send", name: clientName, server: server)
let client = jack.client
let sender = Sender(offsets: offsets, notes: notes, messages: messages, velocity: velocity, gap: gap)
sender.client = client
sender.port = jack.register("midi_out", type: JACK_DEFAULT_MIDI_TYPE, flags: JackPortIsOutput)
jack_set_process_callback(client, processCallback, Unmanaged.passUnretained(sender).toOpaque())
jack.activate()

guard jack.waitForPort(destination, tries: 1000) else { fail("no port \(destination)") }
let result = jack.connect(from: "\(jack.name):midi_out", to: destination, tries: 200)
guard result == 0 else { fail("cannot connect to \(destination) (error \(result))") }
print("ready"); fflush(nil)
sender.armed.store(true, ordering: .releasing)
let period = Double(jack_get_buffer_size(client)) / Double(jack_get_sample_rate(client))
let deadline = Date().addingTimeInterval(Double(offsets.count * gap) * period * 3 + 10)
while !sender.done.load(ordering: .acquiring) {
    if Date() > deadline { fail("timed out sending \(offsets.count) notes") }
    usleep(10_000)
}
jack.close()
for i in 0..<offsets.count {
    if sender.frames[i] < 0 { fail("note \(i) did not fit in the MIDI buffer") }
    if messages.isEmpty {
        print("sent \(notes[i % notes.count]) at \(sender.frames[i])")
    } else {
        let hex = messages[i % messages.count].map { String(format: "%02X", $0) }.joined(separator: ":")
        print("sent \(hex) at \(sender.frames[i])")
    }
}
print("done"); fflush(nil)
