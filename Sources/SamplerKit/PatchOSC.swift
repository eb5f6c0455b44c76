import Foundation
import JACKBackend
import OSC
import Patches
import SamplerCore
import Scheduling

/// The sampler's own OSC interface on a live patch (`sampler play --osc-port`):
///
/// | message | does |
/// |---|---|
/// | `/sampler/trigger ,s id` (`,sf id velocity` 0…1, `,si id velocity` 1…127; `,i index`) | plays the instrument |
/// | `/sampler/stop` | stops every voice |
/// | `/sampler/ping` (`,s address`) | replies `/sampler/pong` |
/// | `/sampler/query` (`,s address`) | replies `/sampler/instrument ,is index id` for each instrument, then `/sampler/state ,hdi frame sampleRate voices` |
///
/// A message in a bundle acts on the device frame of the bundle's timetag; an untimed message,
/// or one whose time has passed, as soon as possible. Replies go to the address a message
/// names (an OSC URL or a port on this machine), else to its sender. Each trigger and stop is
/// printed with its frame.
///
/// Control thread only (the playback's), each tick.
final class PatchOSC {
    let server: OSCServer
    private let log: (String) -> Void

    init(server: OSCServer, log: @escaping (String) -> Void) {
        self.server = server
        self.log = log
    }

    func tick(kit: Patch, loaded: LoadedPatch, engine: Engine, sampleRate: Double, frameAt: (UInt64) -> Frame) {
        for m in server.take() {
            let (at, when) = m.scheduledFrame(engine: engine, sampleRate: sampleRate, frameAt: frameAt)
            let replyTo = m.arguments.first?.text.flatMap(OSCServer.replyURL) ?? m.source
            switch (m.path, m.types) {
            case ("/sampler/ping", ""), ("/sampler/ping", "s"):
                server.send("/sampler/pong", [], to: replyTo)
            case ("/sampler/query", ""), ("/sampler/query", "s"):
                for (i, instrument) in kit.instruments.enumerated() {
                    server.send("/sampler/instrument", [.int(Int32(i)), .string(instrument.id)], to: replyTo)
                }
                server.send("/sampler/state", [.int64(engine.renderedFrame), .double(sampleRate), .int(Int32(engine.activeVoiceCount))],
                            to: replyTo)
            case ("/sampler/trigger", let types) where ["s", "sf", "sd", "si", "i", "if", "id", "ii"].contains(types):
                guard let index = instrumentIndex(m.arguments[0], kit: kit) else {
                    warn(m, "no instrument \(m.arguments[0]) (the patch has \(kit.instruments.map(\.id).joined(separator: ", ")))")
                    continue
                }
                var velocity: Float = 1
                if m.arguments.count == 2, let v = m.arguments[1].number {
                    // An integer is a MIDI velocity (1…127), a float a level (0…1].
                    if case .int = m.arguments[1] { velocity = Float(v) / 127 } else { velocity = Float(v) }
                    guard velocity.isFinite, velocity > 0, velocity <= 1 else { warn(m, "velocity out of range"); continue }
                }
                _ = engine.send(loaded.command(for: Trigger(frame: at, player: index, velocity: velocity)))
                log("osc: /sampler/trigger \(kit.instruments[index].id) \(when): at frame \(at)")
            case ("/sampler/gain", let types) where ["sf", "sd", "si", "if", "id", "ii"].contains(types),
                 ("/sampler/pan", let types) where ["sf", "sd", "si", "if", "id", "ii"].contains(types):
                guard let index = instrumentIndex(m.arguments[0], kit: kit) else {
                    warn(m, "no instrument \(m.arguments[0]) (the patch has \(kit.instruments.map(\.id).joined(separator: ", ")))")
                    continue
                }
                guard !loaded.streams(instrument: index) else { warn(m, "\(kit.instruments[index].id) streams from disk: its mix is the patch's"); continue }
                guard let value = m.arguments[1].number, value.isFinite else { warn(m, "not a number"); continue }
                let isGain = m.path == "/sampler/gain"
                if isGain && !(0...16).contains(value) { warn(m, "gain out of range (0 to 16, linear)"); continue }
                if !isGain && !(-1...1).contains(value) { warn(m, "pan out of range (-1 to 1)"); continue }
                let law: PanLawKind = kit.panLaw == .balance ? .balance : .constantPower
                _ = engine.send(.setInstrumentMix(instrument: index, gain: isGain ? Gain(linear: Float(value)) : nil,
                                                  pan: isGain ? nil : PanGains(pan: Float(value), law: law), at: at))
                log("osc: \(m.path) \(kit.instruments[index].id) \(formatNumber(value)) \(when): at frame \(at)")
            case ("/sampler/stop", ""):
                _ = engine.send(Command(kind: .stopAll, player: 0, frame: at))
                log("osc: /sampler/stop \(when): at frame \(at)")
            default:
                warn(m, "unknown message")
            }
        }
    }

    /// The instrument an argument names: by id, or by index.
    private func instrumentIndex(_ argument: OSCArgument, kit: Patch) -> Int? {
        let index: Int?
        switch argument {
        case .string(let id): index = kit.instruments.firstIndex { $0.id == id }
        case let a: index = a.number.flatMap { $0.isFinite && abs($0) < 1e9 ? Int($0) : nil }
        }
        return index.flatMap { kit.instruments.indices.contains($0) ? $0 : nil }
    }

    private func warn(_ m: OSCMessage, _ what: String) {
        FileHandle.standardError.write("osc: \(m.path) ,\(m.types): \(what)\n".data(using: .utf8)!)
    }
}
