import Patches
import SamplerCore
import Sync

extension PatchProgram {
    /// The patch file at `path` (either version) as a program; its errors name the file and the
    /// JSON path. Control thread only.
    package init(path: String, selection: PatchSelection = .automatic, loop: Bool? = nil, tempo: Double? = nil,
                oscPort: String? = nil, oscHost: String = "127.0.0.1", oscRoot: String? = nil, link: Bool = false) throws {
        let kit: Patch
        do { kit = try PatchLoader.load(path: path) } catch { throw SamplerError("\(error)") }
        try self.init(kit: kit, selection: selection, loop: loop, tempo: tempo, oscPort: oscPort, oscHost: oscHost, oscRoot: oscRoot, link: link)
    }

    /// Whether this build has Ableton Link (`link: true`); it is GPL and opt-in (`make build LINK=1`).
    package static var isLinkAvailable: Bool { LinkSession.isAvailable }
}
