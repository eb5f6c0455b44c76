import Glibc

/// Why `FileGate` refused a file. Callers turn it into their own one-line message (naming the
/// file and what kind of file was expected); it never carries the file's contents.
package enum FileGateError: Error, Equatable, Sendable {
    /// The file could not be opened: a few lower-case words ("no such file", "permission denied").
    case unreadable(String)
    /// Not a regular file: what it is ("a directory", "a FIFO", "a device", "a socket").
    case notRegular(String)
    /// More bytes than the limit of its kind; `size` is what `fstat` or the read found.
    case tooLarge(size: Int)
    /// Outside the directory files may be read from (its symbolic links resolved): the root.
    case outsideRoot(String)
    /// Its first bytes are not what a file of the kind asked for begins with (nothing more was read).
    case notThisKind

    /// The reason in a few words, for messages of the form "FILE: cannot read the file (REASON)".
    package var reason: String {
        switch self {
        case .unreadable(let why): why
        case .notRegular(let what): what == "a directory" ? "it is a directory" : "it is \(what), not a regular file"
        case .tooLarge(let size): "it is \(size) bytes, too large"
        case .outsideRoot(let root): "it is not under \(root)"
        case .notThisKind: "it does not begin as such a file does"
        }
    }
}

/// The one way a file named by a user, a message or a patch is read: regular files only, opened
/// without blocking (a FIFO or a device cannot hang the reader), checked with `fstat` on the open
/// descriptor (no window between the check and the read), read with the limit of its kind (a
/// file that grows past it while being read is refused too), and optionally only under a root
/// directory. Any thread; it blocks only on the file system.
package enum FileGate {
    /// The whole contents of the regular file at `path`, at most `limit` bytes.
    /// - Parameter root: when set, `path` (its symbolic links resolved) must lie under this directory.
    /// - Parameter begins: when set, the first bytes read (up to 64 KB) must satisfy it, or the
    ///   read stops there (`.notThisKind`): a large file of another kind is not read whole.
    package static func read(_ path: String, limit: Int, root: String? = nil,
                             begins: (([UInt8]) -> Bool)? = nil) throws(FileGateError) -> [UInt8] {
        let fd = try open(path, limit: limit, root: root)
        defer { close(fd) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 64 << 10)
        while true {
            let n = chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if n < 0 {
                if errno == EINTR { continue }
                throw .unreadable(describe(errno))
            }
            if n == 0 { return bytes }
            if bytes.isEmpty, let begins, !begins(Array(chunk[0..<n])) { throw .notThisKind }
            bytes.append(contentsOf: chunk[0..<n])
            if bytes.count > limit { throw .tooLarge(size: bytes.count) }
        }
    }

    /// A descriptor of the regular file at `path`, open for reading (blocking mode restored), for
    /// a library that reads by itself (libsndfile's `sf_open_fd`). The caller closes it.
    /// - Parameter limit: the most bytes the file may hold (nil: no limit).
    package static func open(_ path: String, limit: Int? = nil, root: String? = nil) throws(FileGateError) -> Int32 {
        if let root { try checkUnder(root, path) }
        let fd = Glibc.open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY)
        guard fd >= 0 else { throw .unreadable(describe(errno)) }
        // What was opened is checked too: a symbolic link swapped in between the check and the
        // open cannot lead out of the root.
        if let root {
            guard let opened = openedPath(fd), let realRoot = resolved(root),
                  opened.hasPrefix(realRoot.hasSuffix("/") ? realRoot : realRoot + "/") else {
                close(fd)
                throw .outsideRoot(root)
            }
        }
        var info = stat()
        guard fstat(fd, &info) == 0 else {
            let e = errno
            close(fd)
            throw .unreadable(describe(e))
        }
        let type = info.st_mode & S_IFMT
        guard type == S_IFREG else {
            close(fd)
            throw .notRegular(kindName(type))
        }
        if let limit, Int(info.st_size) > limit {
            close(fd)
            throw .tooLarge(size: Int(info.st_size))
        }
        // A regular file never blocks; clear the flag anyway for whoever reads it next.
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK)
        return fd
    }

    /// Throws `.outsideRoot` unless `path` (its symbolic links resolved) lies under `root`; for a
    /// path that names nothing, the same answer as for one outside, unless it lies under the root
    /// as written. For files another library opens by path (a loaded patch's samples).
    package static func checkUnderRoot(_ root: String, _ path: String) throws(FileGateError) {
        try checkUnder(root, path)
    }

    /// The file descriptor `fd` names, as the kernel resolved it (`/proc/self/fd`).
    private static func openedPath(_ fd: Int32) -> String? {
        var buffer = [UInt8](repeating: 0, count: 4096)
        let n = buffer.withUnsafeMutableBytes { readlink("/proc/self/fd/\(fd)", $0.baseAddress!.assumingMemoryBound(to: CChar.self), 4096) }
        guard n > 0 else { return nil }
        return String(decoding: buffer[0..<n], as: UTF8.self)
    }

    private static func checkUnder(_ root: String, _ path: String) throws(FileGateError) {
        guard let realRoot = resolved(root) else { throw .outsideRoot(root) }
        let prefix = realRoot.hasSuffix("/") ? realRoot : realRoot + "/"
        guard let real = resolved(path) else {
            // A path that names nothing: "no such file" only where it lies under the root as
            // written, so that the answer never tells whether a file outside it exists.
            let e = errno
            let written = lexical(path), writtenRoot = lexical(root)
            let under = written.hasPrefix(prefix) || written.hasPrefix(writtenRoot.hasSuffix("/") ? writtenRoot : writtenRoot + "/")
            throw under ? .unreadable(describe(e)) : .outsideRoot(root)
        }
        guard real.hasPrefix(prefix) else { throw .outsideRoot(root) }
    }

    /// `path` made absolute (against the working directory) with `.`, `..` and repeated slashes
    /// taken out, without asking the file system about any of its parts (symbolic links stay as
    /// written).
    package static func lexical(_ path: String) -> String {
        // An absolute path without "/." or "//" (most) is already so: a byte scan, no split.
        if path.hasPrefix("/") {
            var previousWasSlash = false, changes = false
            for c in path.utf8 {
                if previousWasSlash, c == 0x2E || c == 0x2F { changes = true; break }
                previousWasSlash = c == 0x2F
            }
            if !changes { return path }
        }
        var absolute = path
        if !path.hasPrefix("/") {
            var buffer = [CChar](repeating: 0, count: 4096)
            let cwd = getcwd(&buffer, buffer.count) != nil ? String(cString: buffer) : "/"
            absolute = cwd + "/" + path
        }
        var parts: [Substring] = []
        for part in absolute.split(separator: "/") {
            if part == "." { continue }
            if part == ".." { _ = parts.popLast(); continue }
            parts.append(part)
        }
        return "/" + parts.joined(separator: "/")
    }

    private static func resolved(_ path: String) -> String? {
        guard let p = realpath(path, nil) else { return nil }
        defer { free(p) }
        return String(cString: p)
    }

    private static func kindName(_ type: mode_t) -> String {
        switch type {
        case S_IFDIR: "a directory"
        case S_IFIFO: "a FIFO"
        case S_IFCHR, S_IFBLK: "a device"
        case S_IFSOCK: "a socket"
        default: "not a plain file"
        }
    }

    private static func describe(_ code: Int32) -> String {
        switch code {
        case ENOENT, ENOTDIR: "no such file"
        case EACCES, EPERM: "permission denied"
        case EISDIR: "it is a directory"
        case ELOOP: "too many symbolic links"
        default: String(cString: strerror(code)).lowercased()
        }
    }
}
