/// A problem with a patch file, phrased for the person who wrote it.
///
/// The description reads `file: path: message`, or `file: message` when the problem concerns the
/// whole file, e.g. `drums.json: players[2].pan: expected a number between -1 and 1, got "left"`.
package struct PatchError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The patch file, exactly as the caller named it.
    package var file: String
    /// Where in the JSON document the problem is, e.g. `players[2].pan`; empty for the whole file.
    package var path: String
    /// What is wrong, as a sentence fragment without a trailing full stop.
    package var message: String

    package init(file: String, path: String = "", message: String) {
        self.file = file
        self.path = path
        self.message = message
    }

    package var description: String {
        path.isEmpty ? "\(file): \(message)" : "\(file): \(path): \(message)"
    }
}
