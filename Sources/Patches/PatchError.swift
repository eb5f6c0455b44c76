/// A problem with a patch file, phrased for the person who wrote it.
///
/// The description reads `file: path: message`, or `file: message` when the problem concerns the
/// whole file, e.g. `drums.json: players[2].pan: expected a number between -1 and 1, got "left"`.
public struct PatchError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The patch file, exactly as the caller named it.
    public var file: String
    /// Where in the JSON document the problem is, e.g. `players[2].pan`; empty for the whole file.
    public var path: String
    /// What is wrong, as a sentence fragment without a trailing full stop.
    public var message: String

    public init(file: String, path: String = "", message: String) {
        self.file = file
        self.path = path
        self.message = message
    }

    public var description: String {
        path.isEmpty ? "\(file): \(message)" : "\(file): \(path): \(message)"
    }
}
