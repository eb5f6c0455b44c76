import SamplerCore
import SoundFiles

/// What a session's streamed players share: one disk thread (started with the first streamed
/// player) and the rings, which are kept for reuse because the engine keeps every registered
/// ring for its own life. A ring given back is reused only once the render thread has
/// confirmed that no voice reads it (`Engine.requestUnreferenced`), never on a predicted frame.
///
/// Control thread only, under the session lock.
final class SessionStreaming {
    let streamer = DiskStreamer()
    private struct Spare {
        let ring: StreamRing
        let id: SoundID
        /// Confirmed once no voice reads the ring.
        let request: UnreferencedRequest
    }
    private var spares: [Spare] = []

    /// A ring of `capacity` frames (a spare one that fits, or a new one registered with
    /// `engine`), with its sound id. Starts the disk thread.
    func ring(capacity: Int, channelCount: Int, sampleRate: Double, engine: Engine) throws -> (ring: StreamRing, id: SoundID) {
        streamer.start()
        if let i = spares.firstIndex(where: {
            $0.ring.capacity == capacity && $0.ring.channelCount == channelCount && $0.ring.sampleRate == sampleRate
                && engine.isUnreferenced($0.request)
        }) {
            let spare = spares.remove(at: i)
            return (spare.ring, spare.id)
        }
        let ring = StreamRing(capacity: capacity, channelCount: channelCount, sampleRate: sampleRate, memory: HugePageSampleMemory.shared)
        return (ring, try engine.register(stream: ring))
    }

    /// Takes back `stream`'s rings, reusable once the render thread confirms that no voice
    /// reads them (send the stop for their player first).
    func recycle(_ stream: PlayerStream, engine: Engine) {
        stream.close()
        for (reader, id) in zip(stream.readers, stream.soundIDs) {
            spares.append(Spare(ring: reader.ring, id: id, request: engine.requestUnreferenced(id)))
        }
    }

    /// Takes back one reader's ring (a PlayerNode's streamed file), as `recycle(_:engine:)`.
    func recycle(reader: StreamReader, id: SoundID, engine: Engine) {
        reader.park()
        streamer.remove(reader)
        spares.append(Spare(ring: reader.ring, id: id, request: engine.requestUnreferenced(id)))
    }

    /// Takes back a ring no reader was made for.
    func recycle(ring: (ring: StreamRing, id: SoundID), engine: Engine) {
        spares.append(Spare(ring: ring.ring, id: ring.id, request: engine.requestUnreferenced(ring.id)))
    }

    func stop() { streamer.stop() }
}
