// sampler-midi-capture: an independent JACK client that records the MIDI events another client
// sends, each with its absolute device frame, for the tests of MIDI clock output. It shares no
// code with the engine.
//
//   sampler-midi-capture --server NAME [--from CLIENT:midi_out] --frames N [--name N]
//
// It connects --from (if given; else the sender connects to it) to its `midi_in` port, prints
// "ready", records for N frames from the next period on, then prints one line per event, "event FRAME B1 [B2 [B3]]" (bytes in hex), and
// "periods P lost-frames L" and "done". A frame is JACK's frame time of the event's period
// (32-bit, widened to 64 bits from the first period's value) plus the event's offset in it.
import CJACK
import Foundation
import Synchronization
import ToolSupport

/// `@unchecked Sendable`: `frames`, `words`, `count`, `periods` and `lostFrames` are written only by JACK's process thread while `done` is
/// false and read by the main thread only after it has seen `done` (acquiring) and closed the
/// client; `client` and the ports are set before `armed` is stored (releasing).
final class MIDIRecorder: @unchecked Sendable {
    var client: OpaquePointer?
    var port: OpaquePointer?
    let capacity = 1 << 16
    /// Per event: its frame, and its first three bytes with the length in the top byte.
    let frames: UnsafeMutablePointer<Int64>
    let words: UnsafeMutablePointer<UInt32>
    var count = 0
    let armed = Atomic<Bool>(false)
    let done = Atomic<Bool>(false)
    let limit: Int64
    private var first: Int64 = 0
    private var stamp: Int64 = 0
    private var haveFirst = false
    private var next: Int64 = 0
    var periods = 0
    var lostFrames: Int64 = 0

    init(frames limit: Int) {
        self.limit = Int64(limit)
        frames = .allocate(capacity: capacity)
        frames.initialize(repeating: 0, count: capacity)
        words = .allocate(capacity: capacity)
        words.initialize(repeating: 0, count: capacity)
    }

    func process(_ n: UInt32) -> Int32 {
        guard armed.load(ordering: .acquiring), !done.load(ordering: .relaxed), let client, let port else { return 0 }
        let raw = jack_last_frame_time(client)
        if !haveFirst {
            haveFirst = true
            stamp = Int64(raw)
            first = stamp
        } else {
            stamp += Int64(Int32(bitPattern: raw &- UInt32(truncatingIfNeeded: stamp)))
            if stamp > next { lostFrames += stamp - next }
        }
        next = max(next, stamp + Int64(n))
        periods += 1
        if let buffer = jack_port_get_buffer(port, n) {
            let events = jack_midi_get_event_count(buffer)
            var event = jack_midi_event_t()
            var i: UInt32 = 0
            while i < events && count < capacity {
                if jack_midi_event_get(&event, buffer, i) == 0, let data = event.buffer {
                    var word = UInt32(min(event.size, 3)) << 24
                    for b in 0..<min(event.size, 3) { word |= UInt32(data[b]) << (8 * UInt32(b)) }
                    frames[count] = stamp + Int64(event.time)
                    words[count] = word
                    count += 1
                }
                i += 1
            }
        }
        if stamp + Int64(n) - first >= limit { done.store(true, ordering: .releasing) }
        return 0
    }
}

func processCallback(_ n: UInt32, _ arg: UnsafeMutableRawPointer?) -> Int32 {
    Unmanaged<MIDIRecorder>.fromOpaque(arg!)._withUnsafeGuaranteedRef { $0.process(n) }
}

func fail(_ message: String) -> Never { toolFail("sampler-midi-capture", message) }

var server: String?
var clientName = "midicapture"
var source = ""
var frames = 0
var args = CommandLine.arguments.dropFirst().makeIterator()
while let a = args.next() {
    switch a {
    case "--server": server = args.next()
    case "--from": source = args.next() ?? ""
    case "--frames": frames = Int(args.next() ?? "") ?? 0
    case "--name": clientName = args.next() ?? clientName
    default: fail("unknown option \(a)")
    }
}
guard frames > 0 else { fail("usage: --server NAME [--from CLIENT:midi_out] --frames N") }

let jack = ToolClient(tool: "sampler-midi-capture", name: clientName, server: server)
let client = jack.client
let recorder = MIDIRecorder(frames: frames)
recorder.client = client
recorder.port = jack.register("midi_in", type: JACK_DEFAULT_MIDI_TYPE, flags: JackPortIsInput)
jack_set_process_callback(client, processCallback, Unmanaged.passUnretained(recorder).toOpaque())
jack.activate()
if !source.isEmpty {
    guard jack.waitForPort(source, tries: 1000) else { fail("no port \(source)") }
    let result = jack.connect(from: source, to: "\(jack.name):midi_in", tries: 200)
    guard result == 0 else { fail("cannot connect \(source) (error \(result))") }
}
recorder.armed.store(true, ordering: .releasing)
print("ready"); fflush(nil)
let rate = Double(jack_get_sample_rate(client))
let deadline = Date().addingTimeInterval(Double(frames) / rate * 3 + 10)
while !recorder.done.load(ordering: .acquiring) {
    if Date() > deadline { fail("timed out waiting for \(frames) frames") }
    usleep(20_000)
}
jack.close()
var lines: [String] = []
for i in 0..<recorder.count {
    let word = recorder.words[i]
    let bytes = (0..<Int(word >> 24)).map { String(format: "%02X", (word >> (8 * UInt32($0))) & 0xFF) }
    lines.append("event \(recorder.frames[i]) " + bytes.joined(separator: " "))
}
lines.append("periods \(recorder.periods) lost-frames \(recorder.lostFrames)")
lines.append("done")
print(lines.joined(separator: "\n")); fflush(nil)
