import Foundation
import Locking
import SamplerCore
import SoundFiles

/// Plays one sound, like AVAudioPlayer, with every start, seek and fade on an exact frame of the
/// device clock.
///
/// Threads: control threads only (any of them; the session serializes calls). The delegate is
/// called on the session's event thread.
///
/// `stop()` keeps the position, as AVAudioPlayer's does: a later `play()` resumes from there (set
/// `currentTime = 0` to start over). A sound that plays to its end goes back to 0.
///
/// `@unchecked Sendable` by contract: its mutable state is touched only with the session's lock
/// held (its API takes it; the event thread calls its `SessionMember` methods under it) or in
/// deinit; `operations` orders its own operations that release the session lock while they wait.
public final class AudioPlayer: SessionMember, @unchecked Sendable {
    public let session: AudioSession
    /// The file the sound came from, if it came from a file.
    public let url: URL?
    /// The bytes the sound came from, if it came from memory.
    public let data: Data?
    /// The decoded sound (at the session's rate); nil for a streamed player, whose samples stay
    /// on disk (see `init(streamingContentsOf:session:preloadSeconds:)`).
    public let sound: Sound?
    /// Read by the event thread: kept behind the session's lock like every other property.
    public var delegate: AudioPlayerDelegate? {
        get { session.lock.withLock { storedDelegate } }
        set { session.lock.withLock { storedDelegate = newValue } }
    }
    private weak var storedDelegate: AudioPlayerDelegate?

    let player: Int

    /// The named output it plays into (one of the session's `Configuration.outputs`); nil:
    /// the main mix. Any thread.
    public var output: String? { session.output(ofPlayer: player) }

    /// Routes it to the session's output `name` (nil: the main mix): `AudioSession.route`.
    public func setOutput(_ name: String?) throws(SamplerKitError) { try session.route(player: player, to: name) }
    private var soundID: SoundID?
    private let sourceRate: Double
    /// Set for a streamed player: the file and its rings.
    let stream: PlayerStream?
    private let frameCount: Int
    private let channelCount: Int
    private let soundRate: Double
    private enum State { case stopped, playing, paused }
    private var state = State.stopped
    /// Position in frames while stopped or paused.
    private var storedPosition: Frame = 0
    /// Tag of the current start (unique in the session, see `AudioSession.newTag`): events of
    /// earlier starts, and of the slot's previous owners, are ignored.
    private var generation: UInt32 = 0
    private var duckGain: Float = 1
    /// Serializes this player's operations that wait for the disk with the session lock
    /// released (a streamed player's prepare and seek): taken before the session lock.
    private let operations = CheckedLock("an AudioPlayer's operations lock")
    private var meters: MeterReading?

    /// Decodes the file at `path` (any format libsndfile reads) at the session's rate.
    public convenience init(contentsOf path: String, session: AudioSession) throws {
        let loaded: (sound: Sound, fileRate: Double)
        do { loaded = try SoundFileLoader(targetSampleRate: session.sampleRate).loadWithFileRate(path: path) } catch { throw SamplerError("\(error)") }
        try self.init(sound: loaded.sound, session: session, url: URL(fileURLWithPath: path), data: nil, sourceRate: loaded.fileRate)
    }

    /// Decodes the file at `url` (AVAudioPlayer's `init(contentsOf:)`).
    public convenience init(contentsOf url: URL, session: AudioSession) throws {
        try self.init(contentsOf: url.path, session: session)
    }

    /// Decodes `data` (a whole file in memory; `fileTypeHint` like "wav" or "flac" helps
    /// headerless data) at the session's rate.
    public convenience init(data: Data, fileTypeHint: String? = nil, session: AudioSession) throws {
        let loaded: (sound: Sound, fileRate: Double)
        do {
            loaded = try SoundFileLoader(targetSampleRate: session.sampleRate).loadWithFileRate(data: data, name: "data", typeHint: fileTypeHint)
        } catch { throw SamplerError("\(error)") }
        try self.init(sound: loaded.sound, session: session, url: nil, data: data, sourceRate: loaded.fileRate)
    }

    /// Plays an already decoded sound (it should be at the session's rate).
    public convenience init(sound: Sound, session: AudioSession) throws {
        try self.init(sound: sound, session: session, url: nil, data: nil, sourceRate: sound.sampleRate)
    }

    /// A player of `sound`, or (when `sound` is nil) of `stream`.
    init(sound: Sound?, stream: PlayerStream? = nil, session: AudioSession, url: URL?, data: Data?, sourceRate: Double) throws {
        precondition((sound == nil) != (stream == nil))
        self.sound = sound
        self.stream = stream
        self.session = session
        self.url = url
        self.data = data
        self.sourceRate = sourceRate
        frameCount = sound?.frameCount ?? Int(stream!.frameCount)
        channelCount = sound?.channelCount ?? stream!.file.channelCount
        soundRate = sound?.sampleRate ?? stream!.activeReader.ring.sampleRate
        player = try session.allocatePlayer(for: PlaceholderMember())
        session.lock.withLock { session.held.replaceMember(player, with: self) }
    }

    deinit {
        // The release's cancel and stop reach the render thread before the requests these make
        // (the sound and rings go once it confirms no voice reads them): without this, every
        // player made and dropped kept its sound registered, and memory, for the session's life
        // (found by the soak's reloads).
        let soundID = soundID, stream = stream
        session.releasePlayer(player) { held in
            if let soundID { held.unregister(soundID) }
            if let stream { held.streaming.recycle(stream, engine: held.engine) }
        }
    }

    // MARK: Properties

    /// Length in seconds.
    public var duration: Double { Double(frameCount) / soundRate }
    public var numberOfChannels: Int { channelCount }
    public var format: AudioFormat {
        AudioFormat(sampleRate: soundRate, channelCount: channelCount, frameCount: frameCount, sourceSampleRate: sourceRate)
    }
    /// AVAudioPlayer's `settings`, as a dictionary.
    public var settings: [String: Any] {
        ["sampleRate": soundRate, "channels": channelCount, "frames": frameCount, "sourceSampleRate": sourceRate]
    }

    private var storedVolume: Float = 1
    /// Linear volume 0…1 (values above 1 amplify). Setting it changes the level at once (on the
    /// earliest frame possible); `setVolume(_:fadeDuration:)` ramps.
    public var volume: Float {
        get { session.lock.withLock { storedVolume } }
        set { setVolume(newValue, fadeDuration: 0) }
    }

    // Every property below is stored behind the session's lock: the event thread reads them.
    private var storedPan: Float = 0
    private var storedLoops = 0
    private var storedEnableRate = false
    private var storedRate: Float = 1
    private var storedMetering = false
    private var storedDucking: (decibels: Double, fadeDuration: Double)?

    /// Pan -1 (left) … 1 (right); NaN is ignored.
    public var pan: Float {
        get { session.lock.withLock { storedPan } }
        set {
            guard !newValue.isNaN else { return }
            session.lock.withLock {
                storedPan = min(1, max(-1, newValue))
                session.held.send(.setPan(player: player, storedPan, at: session.held.earliestStartFrame))
            }
        }
    }

    /// 0 = play once, N = N extra repeats, -1 = forever (AVAudioPlayer's meaning). Changing it
    /// while playing applies to the repeats still to come.
    public var numberOfLoops: Int {
        get { session.lock.withLock { storedLoops } }
        set {
            session.lock.withLock {
                storedLoops = max(-1, min(newValue, Int(Int32.max)))
                guard state != .stopped else { return }
                if let stream { stream.activeReader.setLoops(storedLoops) } else {
                    session.held.send(.setLoops(player: player, storedLoops))
                }
            }
        }
    }

    /// Must be set before `play()` for `rate` to apply (as AVAudioPlayer). A streamed player
    /// always plays at rate 1.
    public var enableRate: Bool {
        get { session.lock.withLock { storedEnableRate } }
        set { session.lock.withLock { storedEnableRate = newValue } }
    }
    /// Playback speed 0.5…2 (pitch follows speed), interpolated; NaN is ignored.
    public var rate: Float {
        get { session.lock.withLock { storedRate } }
        set {
            guard !newValue.isNaN else { return }
            session.lock.withLock {
                storedRate = min(2, max(0.5, newValue))
                if storedEnableRate { session.held.send(.setRate(player: player, Double(storedRate), at: session.held.earliestStartFrame)) }
            }
        }
    }

    /// Whether the player is playing (started and not paused, stopped or finished).
    public var isPlaying: Bool { session.lock.withLock { state == .playing } }

    /// The device clock in seconds (as AVAudioPlayer's `deviceCurrentTime`).
    public var deviceCurrentTime: Double { session.deviceCurrentTime }

    // MARK: Transport

    /// Registers the sound (or, streamed, fills the first `preloadSeconds` from the play
    /// position) so that `play()` has nothing left to do. False if that failed.
    @discardableResult
    public func prepareToPlay() -> Bool {
        operations.withLock { session.lock.withLock {
            if let stream {
                guard state == .stopped else { return true }
                return stream.prepare(at: Int64(storedPosition), loops: storedLoops, renderedFrame: { session.engine.renderedFrame },
                                      idle: { session.held.sleepUnlocked(microseconds: 500) })
            }
            if soundID == nil, let sound { soundID = try? session.held.register(sound) }
            return soundID != nil
        } }
    }

    /// Plays as soon as possible (on the earliest frame a command can reach).
    @discardableResult
    public func play() -> Bool { play(atFrame: session.earliestStartFrame) }

    /// Plays at device time `time` seconds (compare `deviceCurrentTime`).
    @discardableResult
    public func play(atTime time: Double) -> Bool {
        play(atFrame: Frame((time * session.sampleRate).rounded()))
    }

    /// Plays from device frame `frame` exactly. A frame already past plays at once, from where
    /// the sound would be had it started on time (reported late). False when the sound could not
    /// be prepared, while the session is interrupted (no clock to place it on), or when the
    /// command could not be queued (the engine's queue is full, or a value was refused): the
    /// player then stays as it was. A start the render thread drops because its clock has gone
    /// (a reconnect) ends the playing: `audioPlayerDidFinishPlaying(_:successfully: false)`.
    @discardableResult
    public func play(atFrame frame: Frame) -> Bool {
        guard prepareToPlay() else { return false }
        return session.lock.withLock {
            // As AVAudioPlayer: no playing while the session is interrupted (there is no clock
            // to place the start on).
            guard !session.held.isInterrupted else { return false }
            switch state {
            case .playing:
                return true
            case .paused:
                guard session.held.send(Command(kind: .resume, player: Int32(player), frame: frame)) else { return false }
            case .stopped:
                // A stream voice plays its ring from the read index; the ring holds the position
                // and the loops.
                let tag = session.held.newTag()
                let start = Command.start(player: player, sound: stream?.activeSoundID ?? soundID!, at: frame,
                                          from: stream == nil ? storedPosition : 0, loops: stream == nil ? storedLoops : 0,
                                          gain: Gain(linear: storedVolume * duckGain), pan: PanGains(pan: storedPan),
                                          rate: storedEnableRate && stream == nil ? Double(storedRate) : 1, tag: tag)
                guard session.held.send(start) else { return false }
                generation = tag
                stream?.started(at: frame)
            }
            state = .playing
            session.held.updateDucking()
            return true
        }
    }

    /// Pauses on the earliest frame possible, keeping the position; `play()` resumes. Returns
    /// once that frame has been rendered (within about two periods), waiting outside the
    /// session's lock.
    public func pause() {
        let at: Frame? = session.lock.withLock {
            guard state == .playing else { return nil }
            let at = session.held.earliestStartFrame
            guard session.held.send(Command(kind: .pause, player: Int32(player), frame: at)) else { return nil }
            state = .paused
            session.held.updateDucking()
            return at
        }
        // Returns once the pause has happened, so `currentTime` is where it stopped.
        if let at { waitUntilRendered(at) }
    }

    /// Stops, keeping the position (AVAudioPlayer semantics): `play()` continues from it. A start
    /// still waiting for its frame is cancelled. Returns once the stop has been rendered (within
    /// about two periods), waiting outside the session's lock.
    public func stop() {
        let stopping: (at: Frame, generation: UInt32)? = session.lock.withLock {
            guard state != .stopped else { return nil }
            let at = session.held.earliestStartFrame
            // A start still waiting for its frame (play(atTime:) in the future) is forgotten
            // first, so it cannot sound after the stop.
            session.held.send(Command.cancelPending(player: player))
            session.held.send(.stop(player: player, at: at))
            storedPosition = playingPosition  // until the stop frame is rendered, below
            generation = session.held.newTag()
            state = .stopped
            session.held.updateDucking()
            return (at, generation)
        }
        guard let stopping else { return }
        waitUntilRendered(stopping.at)
        // The position is read back once the stop frame has been rendered (unless the player
        // was started again meanwhile).
        session.lock.withLock {
            guard state == .stopped, generation == stopping.generation else { return }
            storedPosition = playingPosition
            stream?.stopped(at: Int64(storedPosition))
        }
    }

    /// Position in seconds. Setting it while playing seeks on the earliest frame possible.
    public var currentTime: Double {
        get {
            session.lock.withLock {
                let frames = state == .stopped ? storedPosition : playingPosition
                return Double(frames) / soundRate
            }
        }
        set {
            let frame = min(max(0, Frame((newValue * soundRate).rounded())), Frame(frameCount - 1))
            seek(toFrame: frame, at: nil)
        }
    }

    /// Where the voice is in the sound (streamed: where the ring's read index is in the file).
    private var playingPosition: Frame { stream.map { Frame($0.position) } ?? session.engine.position(ofPlayer: player) }

    /// Moves to `position` (frames in the sound) on device frame `frame` (nil: the earliest).
    /// Returns the device frame where the jump happens.
    ///
    /// Streamed, while playing or paused: the idle ring is filled from `position` first (this
    /// call waits for it, and for a previous seek's frame to pass), then started on the frame;
    /// a frame that has passed by then is reported late and the jump happens at once.
    @discardableResult
    public func seek(toFrame position: Frame, at frame: Frame?) -> Frame {
        operations.withLock { session.lock.withLock {
            if state == .stopped {
                storedPosition = position
                return frame ?? session.held.earliestStartFrame
            }
            if let stream { return seekStream(stream, to: position, at: frame) }
            let at = frame ?? session.held.earliestStartFrame
            session.held.send(.seek(player: player, to: position, at: at))
            return at
        } }
    }

    /// Switches the stream to its idle ring, cued at `position`, on `frame`. Session lock held.
    private func seekStream(_ stream: PlayerStream, to position: Frame, at frame: Frame?) -> Frame {
        let loops = storedLoops < 0 ? -1 : stream.remainingLoops
        guard stream.cueIdle(at: Int64(position), loops: loops, renderedFrame: { session.engine.renderedFrame },
                             idle: { session.held.sleepUnlocked(microseconds: 500) }) else {
            return frame ?? session.held.earliestStartFrame
        }
        let at = max(frame ?? session.held.earliestStartFrame, stream.startFrame)
        session.held.send(.start(player: player, sound: stream.idleSoundID, at: at, gain: Gain(linear: storedVolume * duckGain),
                            pan: PanGains(pan: storedPan), tag: generation))
        if state == .paused { session.held.send(Command(kind: .pause, player: Int32(player), frame: at)) }
        stream.switchToIdle(at: at)
        return at
    }

    /// Ramps the volume to `volume` over `fadeDuration` seconds, sample by sample, starting on
    /// the earliest frame possible.
    public func setVolume(_ volume: Float, fadeDuration: Double) {
        session.lock.withLock {
            storedVolume = max(0, volume)
            let frames = Int((fadeDuration * session.held.sampleRate).rounded())
            session.held.send(.setGain(player: player, Gain(linear: volume * duckGain), fadeFrames: frames, at: session.held.earliestStartFrame))
        }
    }

    /// Ramps the volume over exactly `fadeFrames` frames from device frame `frame`.
    public func setVolume(_ volume: Float, fadeFrames: Int, at frame: Frame) {
        session.lock.withLock {
            storedVolume = max(0, volume)
            session.held.send(.setGain(player: player, Gain(linear: volume * duckGain), fadeFrames: fadeFrames, at: frame))
        }
    }

    // MARK: Metering

    /// Metering costs a little on the render thread; off by default.
    public var isMeteringEnabled: Bool {
        get { session.lock.withLock { storedMetering } }
        set {
            session.lock.withLock {
                storedMetering = newValue
                session.held.send(.setMetering(player: player, newValue))
            }
        }
    }

    /// Takes the levels since the previous call (as AVAudioPlayer's `updateMeters`).
    public func updateMeters() {
        session.lock.withLock {
            guard storedMetering else { return }
            meters = session.engine.takeMeters(ofPlayer: player)
        }
    }

    /// Mean power of channel 0 (left) or 1 (right) over the last `updateMeters` interval, dBFS.
    public func averagePower(forChannel channel: Int) -> Float {
        session.lock.withLock { Float(meters?.averagePower(channel: channel) ?? -160) }
    }

    /// Peak of channel 0 or 1 over the last `updateMeters` interval, dBFS.
    public func peakPower(forChannel channel: Int) -> Float {
        session.lock.withLock { Float(meters?.peakPower(channel: channel) ?? -160) }
    }

    // MARK: Ducking

    /// While this player plays, every other player of the session is lowered by `decibels`
    /// with a fade of `fadeDuration` seconds (e.g. a voice prompt over a backing track), and
    /// brought back the same way when it stops, pauses or finishes. nil: no ducking.
    public var ducksOthers: (decibels: Double, fadeDuration: Double)? {
        get { session.lock.withLock { storedDucking } }
        set {
            session.lock.withLock {
                storedDucking = newValue
                session.held.updateDucking()
            }
        }
    }

    /// Session lock held.
    var isDucking: Bool { storedDucking != nil && state == .playing }
    /// `ducksOthers`, session lock held.
    var heldDucking: (decibels: Double, fadeDuration: Double)? { storedDucking }

    /// Lowers (or restores) this player's level for ducking, over `fadeFrames`. Session lock held.
    func setDuck(_ gain: Float, fadeFrames: Int) {
        guard gain != duckGain else { return }
        duckGain = gain
        if state == .playing {
            session.held.send(.setGain(player: player, Gain(linear: storedVolume * duckGain), fadeFrames: fadeFrames, at: session.held.earliestStartFrame))
        }
    }

    private func waitUntilRendered(_ frame: Frame) {
        let deadline = Date().addingTimeInterval(1)
        while session.engine.renderedFrame <= frame && !session.isInterrupted && Date() < deadline { usleep(500) }
    }

    // MARK: SessionMember

    func handle(_ event: Event, session: AudioSession) -> [() -> Void] {
        guard event.tag == generation else { return [] }
        switch event.kind {
        case .staleCommand:
            // Its start was made on a clock that is gone (a reconnect): it never played.
            state = .stopped
            generation = session.held.newTag()
            session.held.updateDucking()
            if let delegate = storedDelegate { return [{ delegate.audioPlayerDidFinishPlaying(self, successfully: false) }] }
        case .finished:
            state = .stopped
            storedPosition = 0
            stream?.invalidate()
            generation = session.held.newTag()
            session.held.updateDucking()
            if let delegate = storedDelegate { return [{ delegate.audioPlayerDidFinishPlaying(self, successfully: true) }] }
        default:
            break
        }
        return []
    }

    func tick(session: AudioSession) -> [() -> Void] {
        guard let stream else { return [] }
        stream.maintain(renderedFrame: session.engine.renderedFrame)
        let missing = stream.takeNewUnderruns()
        guard missing > 0, let delegate = storedDelegate else { return [] }
        return [{ delegate.audioPlayerStreamDidUnderrun(self, missingFrames: missing) }]
    }

    func interruptionBegan(session: AudioSession) -> [() -> Void] {
        var calls: [() -> Void] = []
        if state != .stopped {
            storedPosition = playingPosition
            stream?.stopped(at: Int64(storedPosition))
            state = .stopped
            generation = session.held.newTag()
            if let delegate = storedDelegate { calls.append { delegate.audioPlayerDidFinishPlaying(self, successfully: false) } }
        }
        if let delegate = storedDelegate { calls.append { delegate.audioPlayerBeginInterruption(self) } }
        return calls
    }

    func interruptionEnded(session: AudioSession) -> [() -> Void] {
        if let delegate = storedDelegate { return [{ delegate.audioPlayerEndInterruption(self) }] }
        return []
    }
}

/// Holds a player slot while its owner is being initialized.
final class PlaceholderMember: SessionMember {
    func handle(_ event: Event, session: AudioSession) -> [() -> Void] { [] }
    func tick(session: AudioSession) -> [() -> Void] { [] }
    func interruptionBegan(session: AudioSession) -> [() -> Void] { [] }
    func interruptionEnded(session: AudioSession) -> [() -> Void] { [] }
}
