import Foundation

// Finding an SFZ file's samples on disk.

extension SFZImporter {
    static func fileExists(_ path: String) -> Bool {
        var isDirectory: ObjCBool = false
        return FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) && !isDirectory.boolValue
    }

    /// `path` itself if it exists, else the file whose path matches it ignoring letter case
    /// (component by component), else nil. `listings` keeps each directory's entries, lowercased,
    /// once read: a kit of many regions lists each directory once.
    static func findFile(_ path: String, exists: (String) -> Bool, listings: inout [String: [String: String]]) -> String? {
        let standardized = URL(fileURLWithPath: path).standardizedFileURL.path
        if exists(standardized) { return standardized }
        var current = "/"
        for component in standardized.split(separator: "/") {
            let candidate = current + (current.hasSuffix("/") ? "" : "/") + component
            var isDirectory: ObjCBool = false
            if FileManager.default.fileExists(atPath: candidate, isDirectory: &isDirectory) { current = candidate; continue }
            if listings[current] == nil {
                var entries: [String: String] = [:]
                for entry in (try? FileManager.default.contentsOfDirectory(atPath: current)) ?? [] where entries[entry.lowercased()] == nil {
                    entries[entry.lowercased()] = entry
                }
                listings[current] = entries
            }
            guard let match = listings[current]?[component.lowercased()] else { return nil }
            current = current + (current.hasSuffix("/") ? "" : "/") + match
        }
        return exists(current) ? current : nil
    }
}
