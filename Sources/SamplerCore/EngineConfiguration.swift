/// Fixed capacities of an `Engine`, chosen before it starts; nothing grows afterwards.
public struct EngineConfiguration: Sendable {
    /// Players (each with one voice).
    public var maxPlayers: Int = 256
    /// Sounds that can be registered.
    public var maxSounds: Int = 1024
    /// Control → render commands in flight at once.
    public var commandCapacity: Int = 4096
    /// Render → control events in flight at once.
    public var eventCapacity: Int = 8192
    /// Commands waiting for a future frame on the render side.
    public var scheduleCapacity: Int = 8192
    /// The largest jump of the device clock the engine advances its voices over (skipped
    /// cycles, a late start); a larger one is taken as a new clock. 524,288 frames: 10.9 s at
    /// 48 kHz.
    public var maxCatchUpFrames: Int = 524_288

    public init(maxPlayers: Int = 256, maxSounds: Int = 1024, commandCapacity: Int = 4096,
                eventCapacity: Int = 8192, scheduleCapacity: Int = 8192, maxCatchUpFrames: Int = 524_288) {
        self.maxCatchUpFrames = maxCatchUpFrames
        self.maxPlayers = maxPlayers
        self.maxSounds = maxSounds
        self.commandCapacity = commandCapacity
        self.eventCapacity = eventCapacity
        self.scheduleCapacity = scheduleCapacity
    }
}
