@testable import JACKBackend
import Testing

/// The watchdog's bookkeeping, with made-up clocks: 48 kHz, 256-frame periods.
struct ProcessWatchdogTests {
    @Test func periodsThatKeepComingAreNeverReported() {
        var dog = ProcessWatchdog(limit: 5, sampleRate: 48000)
        for i in 0..<2000 {
            // One period every 5.33 ms, checked every 10 ms: the count moves between checks.
            let t = Double(i) * 0.01
            #expect(dog.check(periods: Int(t * 187.5), serverFrame: UInt32(t * 48000), now: t) == nil)
        }
    }

    @Test func aClientTheServerSkipsIsReportedAfterTheLimit() {
        var dog = ProcessWatchdog(limit: 5, sampleRate: 48000)
        #expect(dog.check(periods: 100, serverFrame: 4_000_000_000, now: 10) == nil)
        // The server runs on (its frame wraps past 2^32 on the way); the client's count stands.
        #expect(dog.check(periods: 100, serverFrame: 4_000_000_000 &+ 48000 * 4, now: 14.9) == nil)
        let stall = dog.check(periods: 100, serverFrame: 4_000_000_000 &+ 48000 * 5, now: 15)
        #expect(stall == ProcessWatchdog.Stall(seconds: 5, serverSeconds: 5, serverRan: true, hadStarted: true))
        #expect(stall?.message(client: "drums").hasPrefix("JACK has stopped running this client (drums) for 5 s while its server ran on") == true)
    }

    @Test func aClientNeverRunSaysSo() {
        var dog = ProcessWatchdog(limit: 5, sampleRate: 48000)
        #expect(dog.check(periods: 0, serverFrame: 0, now: 0) == nil)
        let stall = dog.check(periods: 0, serverFrame: 48000 * 6, now: 6)
        #expect(stall?.hadStarted == false && stall?.serverRan == true)
        #expect(stall?.message(client: "x").hasPrefix("JACK never ran this client (x) for 6 s") == true)
    }

    @Test func aServerThatStoppedIsNotBlamedOnTheClient() {
        var dog = ProcessWatchdog(limit: 5, sampleRate: 48000)
        #expect(dog.check(periods: 7, serverFrame: 1000, now: 0) == nil)
        // Half a second of cycles in five seconds: the server itself stalled.
        let stall = dog.check(periods: 7, serverFrame: 1000 + 24000, now: 5)
        #expect(stall?.serverRan == false)
        #expect(stall?.message(client: "x") == "the JACK server is not running its process cycle (no cycle in 5 s)")
    }

    @Test func aPeriodRestartsTheWait() {
        var dog = ProcessWatchdog(limit: 5, sampleRate: 48000)
        #expect(dog.check(periods: 1, serverFrame: 0, now: 0) == nil)
        #expect(dog.check(periods: 2, serverFrame: 48000 * 4, now: 4) == nil)
        #expect(dog.check(periods: 2, serverFrame: 48000 * 8, now: 8) == nil)
        #expect(dog.check(periods: 2, serverFrame: 48000 * 9, now: 9) != nil)
    }
}
