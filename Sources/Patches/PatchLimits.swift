/// The limits a patch file is held to (stated in docs/reliability.md; each is an error naming the JSON
/// path when exceeded). They keep a hostile or mistaken file from making the program allocate
/// without bound; every one is far above what a real patch or kit needs.
package enum PatchLimits {
    /// Players in a version-1 patch.
    package static let players = 4096
    /// Sounds in a version-1 patch (the engine's table is sized to the patch).
    package static let sounds = 100_000
    /// Instruments in a version-2 patch (as many as a version-1 patch's players, so that every
    /// version-1 patch converts), layers per instrument, samples per layer.
    package static let instruments = 4096
    package static let layersPerInstrument = 128
    package static let samplesPerLayer = 128
    /// Steps in one play of a pattern (version 1 or 2).
    package static let steps = 1 << 20

    /// Throws at `node` when `count` exceeds `limit`.
    static func check(_ count: Int, _ limit: Int, _ what: String, at node: JSONNode) throws(PatchError) {
        guard count > limit else { return }
        throw node.error("at most \(limit) \(what), got \(count)")
    }
}
