import Foundation
import SafeFiles

// Finding an SFZ file's samples on disk.

extension SFZImporter {
    static func fileExists(_ path: String) -> Bool {
        var isDirectory: ObjCBool = false
        return FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) && !isDirectory.boolValue
    }

    /// Whether `path` is a regular file or a symbolic link, the link not followed (a kit
    /// loaded under a root: where a link leads is checked once, against the root, with one
    /// answer whether its target exists or not).
    static func entryExists(_ path: String) -> Bool {
        var info = stat()
        guard lstat(path, &info) == 0 else { return false }
        return info.st_mode & S_IFMT == S_IFREG || info.st_mode & S_IFMT == S_IFLNK
    }

    /// Refuses a sample (`SampleOutsideRoot`) whose directory, as written, is not a directory
    /// under `root` (or the root itself): outside it as written, nothing is looked at; inside,
    /// its links are resolved against the root.
    static func checkDirectory(of standardized: String, under root: String) throws {
        // Split at the last "/" byte, as `findFile` splits.
        guard let slash = standardized.utf8.lastIndex(of: UInt8(ascii: "/")) else { throw SampleOutsideRoot(root: root) }
        let directory = slash == standardized.startIndex ? "/" : String(standardized[..<slash])
        let writtenRoot = FileGate.lexical(root)
        guard directory == writtenRoot || directory.hasPrefix(writtenRoot.hasSuffix("/") ? writtenRoot : writtenRoot + "/") else {
            throw SampleOutsideRoot(root: root)
        }
        let resolvedDirectory = realpath(directory, nil), resolvedRoot = realpath(root, nil)
        defer { free(resolvedDirectory); free(resolvedRoot) }
        guard let resolvedDirectory, let resolvedRoot else { throw SampleOutsideRoot(root: root) }
        let d = String(cString: resolvedDirectory), r = String(cString: resolvedRoot)
        guard d == r || d.hasPrefix(r.hasSuffix("/") ? r : r + "/") else { throw SampleOutsideRoot(root: root) }
        var info = stat()
        guard stat(d, &info) == 0, info.st_mode & S_IFMT == S_IFDIR else { throw SampleOutsideRoot(root: root) }
    }

    /// What the import has learnt of the disk while finding samples: each directory as written
    /// resolved once, and each directory it had to search listed once.
    struct SampleLookup {
        /// Directories as written → as spelled on disk (nil: none matches).
        var directories: [String: String?] = [:]
        /// Listed directories (as spelled on disk): their regular files by lowercased name.
        var listings: [String: Listing] = [:]
        /// Whether a listing takes a symbolic link as what it points to (else as a file,
        /// wherever it leads: a kit loaded under a root).
        var followsLinks = true
        /// The directory the last sample was found in by its listing (as written, with the
        /// listing and the prefix its files are named with): a library's samples mostly share one.
        var lastListed: (directory: String, prefix: String, listing: Listing)?
    }

    /// A directory's regular files by lowercased name: the one name of each, and the names
    /// of those that differ only in letter case (in the listing's order). A name is returned
    /// as the listing spells it: Swift's equal strings may differ in bytes (one Unicode normal
    /// form finds a file in another).
    struct Listing {
        var byLowercased: [String: String] = [:]
        var sharingLowercased: [String: [String]] = [:]

        /// The file named `name`, else the first whose name differs from it only in letter case.
        func file(_ name: String) -> String? {
            let lower = name.lowercased()
            if let several = sharingLowercased[lower] { return several.first { $0 == name } ?? several[0] }
            return byLowercased[lower]
        }
    }


    /// `path` (absolute, lexically standardized) itself if it exists, else the file whose path
    /// matches it ignoring letter case (component by component), else nil. Once a directory
    /// has been searched its listing answers for every later sample in it (no file is looked
    /// up again): a kit of many regions costs a listing per directory, not a lookup per region.
    static func findFile(_ standardized: String, exists: (String) -> Bool, lookup: inout SampleLookup) -> String? {
        // A path longer than the system's (PATH_MAX) names no file: nothing is looked up.
        guard standardized.utf8.count < 4096 else { return nil }
        let bytes = standardized.utf8
        guard let slash = bytes.lastIndex(of: UInt8(ascii: "/")) else { return nil }
        let directory = String(standardized[..<slash]), name = String(standardized[bytes.index(after: slash)...])
        guard !name.isEmpty else { return nil }
        if let last = lookup.lastListed, last.directory == directory { return last.listing.file(name).map { last.prefix + $0 } }
        // A directory not found on disk: the path as written, if `exists` says so (the fuzzer's
        // pretend files), else nothing.
        guard let found = findDirectory(directory.isEmpty ? "/" : directory, lookup: &lookup) else {
            return exists(standardized) ? standardized : nil
        }
        let prefix = found + (found.hasSuffix("/") ? "" : "/")
        if lookup.listings[found] == nil {
            if exists(prefix + name) { return prefix + name }
            // A directory that cannot be listed is asked file by file.
            guard let listed = listing(found, followingLinks: lookup.followsLinks) else { return nil }
            lookup.listings[found] = listed
        }
        guard let listed = lookup.listings[found] else { return exists(prefix + name) ? prefix + name : nil }
        lookup.lastListed = (directory, prefix, listed)
        return listed.file(name).map { prefix + $0 }
    }

    /// The directory `path` (absolute, under 4,096 bytes) names, as spelled on disk: letter case
    /// matched component by component from the root where it is not found as written; nil when
    /// none matches. Each directory is resolved once.
    private static func findDirectory(_ path: String, lookup: inout SampleLookup) -> String? {
        if let known = lookup.directories[path] { return known }
        var found = "/"
        var written = ""
        var result: String? = "/"
        for component in path.split(separator: "/") {
            written += "/" + component
            if let known = lookup.directories[written] {
                guard let k = known else { result = nil; break }
                found = k
                continue
            }
            let candidate = found + (found.hasSuffix("/") ? "" : "/") + component
            var isDirectory: ObjCBool = false
            var next: String?
            if FileManager.default.fileExists(atPath: candidate, isDirectory: &isDirectory), isDirectory.boolValue {
                next = candidate
            } else if let match = directoryEntries(found)[component.lowercased()] {
                next = found + (found.hasSuffix("/") ? "" : "/") + match
            }
            lookup.directories[written] = .some(next)
            guard let next else { result = nil; break }
            found = next
        }
        if result != nil { result = found }
        lookup.directories[path] = .some(result)
        return result
    }

    /// The subdirectories of `path`, by lowercased name.
    private static func directoryEntries(_ path: String) -> [String: String] {
        var directories: [String: String] = [:]
        for (name, kind) in entries(of: path) ?? [] where kind == S_IFDIR && directories[name.lowercased()] == nil {
            directories[name.lowercased()] = name
        }
        return directories
    }

    /// The regular files of directory `path`.
    private static func listing(_ path: String, followingLinks: Bool) -> Listing? {
        guard let all = entries(of: path, followingLinks: followingLinks) else { return nil }
        var listed = Listing()
        listed.byLowercased.reserveCapacity(all.count)
        for (name, kind) in all where kind == S_IFREG || kind == S_IFLNK {
            let lower = name.lowercased()
            if let first = listed.byLowercased.updateValue(name, forKey: lower) {
                listed.byLowercased[lower] = first
                listed.sharingLowercased[lower, default: [first]].append(name)
            }
        }
        return listed
    }

    /// The entries of directory `path` with their kinds (`S_IFREG`, `S_IFDIR`, …; a symbolic
    /// link as what it points to, or as `S_IFLNK` unless `followingLinks`), read once with
    /// `readdir`; nil when it cannot be listed.
    private static func entries(of path: String, followingLinks: Bool = true) -> [(String, mode_t)]? {
        guard let dir = opendir(path) else { return nil }
        defer { closedir(dir) }
        let prefix = path + (path.hasSuffix("/") ? "" : "/")
        var result: [(String, mode_t)] = []
        while let entry = readdir(dir) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
            if name == "." || name == ".." { continue }
            var kind: mode_t = 0
            switch Int32(entry.pointee.d_type) {
            case Int32(DT_REG): kind = S_IFREG
            case Int32(DT_DIR): kind = S_IFDIR
            case Int32(DT_LNK), Int32(DT_UNKNOWN):
                var info = stat()
                if followingLinks ? stat(prefix + name, &info) == 0 : lstat(prefix + name, &info) == 0 { kind = info.st_mode & S_IFMT }
            default: break
            }
            result.append((name, kind))
        }
        return result
    }
}

extension String {
    /// Without the blanks (spaces and tabs) at either end.
    var trimmedBlanks: String {
        let u = utf8
        guard let first = u.first, let last = u.last else { return self }
        if first != 0x20, first != 0x09, last != 0x20, last != 0x09 { return self }
        return trimmingCharacters(in: .whitespaces)
    }
}
