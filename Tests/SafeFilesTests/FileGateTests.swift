import Foundation
import Glibc
import SafeFiles
import Synchronization
import Testing

/// `FileGate`: what a message or a patch may make the program read.
@Suite struct FileGateTests {
    let dir: URL = {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("filegate-\(getpid())-\(UUID().uuidString)")
        try? FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }()

    @Test func aRegularFileIsReadWhole() throws {
        let file = dir.appendingPathComponent("a.txt").path
        try "hello".write(toFile: file, atomically: true, encoding: .utf8)
        #expect(try FileGate.read(file, limit: 5) == Array("hello".utf8))
    }

    @Test func aFileOverItsLimitIsRefusedWithItsSize() throws {
        let file = dir.appendingPathComponent("big.txt").path
        try String(repeating: "x", count: 100).write(toFile: file, atomically: true, encoding: .utf8)
        #expect(throws: FileGateError.tooLarge(size: 100)) { try FileGate.read(file, limit: 99) }
    }

    /// A FIFO with no writer would block a plain open for ever; the gate refuses it at once.
    @Test func aFIFOIsRefusedWithoutBlocking() throws {
        let fifo = dir.appendingPathComponent("fifo").path
        #expect(mkfifo(fifo, 0o600) == 0)
        let started = Date()
        #expect(throws: FileGateError.notRegular("a FIFO")) { try FileGate.read(fifo, limit: 1 << 20) }
        #expect(Date().timeIntervalSince(started) < 5)
    }

    /// /dev/zero reports size 0 to stat and never ends: a size check on the path would pass it.
    @Test func aDeviceIsRefused() {
        #expect(throws: FileGateError.notRegular("a device")) { try FileGate.read("/dev/zero", limit: 1 << 20) }
    }

    @Test func aDirectoryAndAMissingFileAreNamedAsSuch() {
        #expect(throws: FileGateError.notRegular("a directory")) { try FileGate.read(dir.path, limit: 10) }
        #expect(throws: FileGateError.unreadable("no such file")) { try FileGate.read(dir.appendingPathComponent("none").path, limit: 10) }
        #expect(FileGateError.notRegular("a directory").reason == "it is a directory")
        #expect(FileGateError.notRegular("a FIFO").reason == "it is a FIFO, not a regular file")
    }

    /// With a root, a file under it is read; one outside it, or reached through a symbolic link
    /// that leaves it, is refused.
    @Test func aRootKeepsReadsInsideItThroughSymbolicLinks() throws {
        let root = dir.appendingPathComponent("root")
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        let inside = root.appendingPathComponent("in.txt").path
        let outside = dir.appendingPathComponent("out.txt").path
        try "in".write(toFile: inside, atomically: true, encoding: .utf8)
        try "out".write(toFile: outside, atomically: true, encoding: .utf8)
        let link = root.appendingPathComponent("link.txt").path
        #expect(symlink(outside, link) == 0)
        #expect(try FileGate.read(inside, limit: 10, root: root.path) == Array("in".utf8))
        #expect(throws: FileGateError.outsideRoot(root.path)) { try FileGate.read(outside, limit: 10, root: root.path) }
        #expect(throws: FileGateError.outsideRoot(root.path)) { try FileGate.read(link, limit: 10, root: root.path) }
        #expect(throws: FileGateError.outsideRoot(root.path)) {
            try FileGate.read(root.path + "/../out.txt", limit: 10, root: root.path)
        }
        // A path outside the root gets the same answer whether its file exists or not (issue 52:
        // "no such file" against "not under ROOT" told which files exist); under the root, a
        // missing file is said to be missing.
        for missing in [dir.appendingPathComponent("gone.txt").path, "/nonexistent-\(UUID().uuidString)/x", root.path + "/../gone.txt"] {
            #expect(throws: FileGateError.outsideRoot(root.path)) { try FileGate.read(missing, limit: 10, root: root.path) }
        }
        #expect(throws: FileGateError.unreadable("no such file")) { try FileGate.read(root.path + "/gone.txt", limit: 10, root: root.path) }
    }

    /// A symbolic link swapped between the root check and the open (issue 52: the check resolved
    /// the path, then the unresolved one was opened) never leads out: what was opened is
    /// checked. A thread flips the link between a file inside and one outside while reads go on.
    @Test func aLinkSwappedWhileReadingNeverLeadsOutOfTheRoot() throws {
        let root = dir.appendingPathComponent("swap")
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        let inside = root.appendingPathComponent("in.txt").path
        let outside = dir.appendingPathComponent("secret.txt").path
        try "in".write(toFile: inside, atomically: true, encoding: .utf8)
        try "secret".write(toFile: outside, atomically: true, encoding: .utf8)
        let link = root.appendingPathComponent("link.txt").path, spare = root.appendingPathComponent("spare.txt").path
        #expect(symlink(inside, link) == 0)
        let stop = Atomic<Bool>(false)
        let flipper = Thread {
            var out = false
            while !stop.load(ordering: .relaxed) {
                unlink(spare)
                _ = symlink(out ? outside : inside, spare)
                rename(spare, link)
                out.toggle()
            }
        }
        flipper.start()
        defer { stop.store(true, ordering: .relaxed) }
        var leaked = 0, read = 0
        let deadline = Date().addingTimeInterval(2)
        while Date() < deadline {
            if let bytes = try? FileGate.read(link, limit: 100, root: root.path) {
                read += 1
                if bytes == Array("secret".utf8) { leaked += 1 }
            }
        }
        #expect(leaked == 0, "\(leaked) of \(read) reads returned the file outside the root")
        #expect(read > 0)
    }
}
