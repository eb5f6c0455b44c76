import Foundation

/// Polls `condition` every millisecond until it holds or `timeout` seconds pass; returns whether
/// it held. This waits on a condition; it is not a sleep standing in for synchronization.
@discardableResult
public func waitUntil(timeout: Double, _ condition: () -> Bool) -> Bool {
    let deadline = Date().addingTimeInterval(timeout)
    while !condition() {
        if Date() > deadline { return false }
        usleep(1_000)
    }
    return true
}
