import Foundation

/// A running `sampler-midi-capture` process: the MIDI events another client sent, each with its
/// absolute device frame, recorded by a client that shares no code with the engine.
public final class MIDICaptureProcess {
    private let process = Process()
    private let output = Pipe()

    /// One recorded event.
    public struct Event: Equatable, Sendable, CustomStringConvertible {
        public var frame: Int64
        public var bytes: [UInt8]
        public init(frame: Int64, bytes: [UInt8]) {
            self.frame = frame
            self.bytes = bytes
        }
        public var description: String { "\(frame): " + bytes.map { String(format: "%02X", $0) }.joined(separator: " ") }
    }

    /// Starts recording `frames` frames on `server` as client `name` (its port `NAME:midi_in`,
    /// for the sender to connect to, or connected from `source`); returns once it records.
    public init(server: JACKServer, frames: Int, name: String = "midicap", from source: String? = nil) throws {
        process.executableURL = productsDirectory.appendingPathComponent("sampler-midi-capture")
        process.arguments = ["--server", server.name, "--frames", "\(frames)", "--name", name] + (source.map { ["--from", $0] } ?? [])
        process.standardOutput = output
        process.standardError = FileHandle.standardError
        try process.run()
        guard readLine() == "ready" else { throw TestFailure("sampler-midi-capture did not get ready") }
    }

    private func readLine() -> String? { output.fileHandleForReading.readLineUnbuffered() }

    /// Waits for the recording to end; the events in order, and the frames no period covered.
    public func finish() throws -> (events: [Event], lostFrames: Int64) {
        var events: [Event] = []
        var lost: Int64 = 0
        while let line = readLine() {
            let words = line.split(separator: " ")
            if words.first == "event", words.count >= 3, let frame = Int64(words[1]) {
                events.append(Event(frame: frame, bytes: words.dropFirst(2).compactMap { UInt8($0, radix: 16) }))
            } else if words.first == "periods", words.count == 4 {
                lost = Int64(words[3]) ?? 0
            }
        }
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { throw TestFailure("sampler-midi-capture failed") }
        return (events, lost)
    }
}
