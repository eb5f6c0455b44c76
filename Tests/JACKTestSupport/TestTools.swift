import Foundation

/// The one rule for a program `make test` installs (`scripts/install-deps.sh test`: klick,
/// Hydrogen's h2cli, sfizz_render, PipeWire, ...): a test that needs it fails when it is missing,
/// with a message naming it and `make test-deps`; it never skips. (A capability the machine may
/// lack and `make test` cannot install, such as transparent huge pages, may skip a test, saying
/// why.)
public func requireTestTool(_ path: String, _ package: String) throws {
    guard FileManager.default.isExecutableFile(atPath: path) else { throw TestFailure(missingTestTool(path, package)) }
}

/// The failure message for a missing program `make test` installs (`requireTestTool`).
public func missingTestTool(_ tool: String, _ package: String) -> String {
    "\(tool) is missing (\(package)): `make test-deps` installs it (`make test` does too)"
}
