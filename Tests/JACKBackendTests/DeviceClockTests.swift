import Testing
@testable import JACKBackend

@Suite struct DeviceClockTests {
    @Test func countsPeriodsFromJACKsFirstValue() {
        var clock = DeviceClock()
        #expect(clock.advance(raw: 1000, frames: 256) == 1000)
        #expect(clock.advance(raw: 1256, frames: 256) == 1256)
        #expect(clock.advance(raw: 1512, frames: 128) == 1512)
        #expect(clock.advance(raw: 1640, frames: 128) == 1640)
    }

    @Test func aSingleLateReadDoesNotMoveThePeriod() {
        var clock = DeviceClock()
        _ = clock.advance(raw: 0, frames: 256)
        // A late callback already sees the next cycle's time (or three cycles later).
        #expect(clock.advance(raw: 512, frames: 256) == 256)
        #expect(clock.advance(raw: 512, frames: 256) == 512)
        #expect(clock.advance(raw: 1536, frames: 256) == 768)
        #expect(clock.advance(raw: 1024, frames: 256) == 1024)
    }

    @Test func skippedCyclesAreFollowedAfterAFewPeriods() {
        var clock = DeviceClock()
        _ = clock.advance(raw: 0, frames: 256)
        // JACK skipped two cycles: its time is 512 ahead from now on.
        #expect(clock.advance(raw: 768, frames: 256) == 256)
        #expect(clock.advance(raw: 1024, frames: 256) == 512)
        #expect(clock.advance(raw: 1280, frames: 256) == 1280)
        #expect(clock.advance(raw: 1536, frames: 256) == 1536)
    }

    @Test func widensAcrossThe32BitWrap() {
        var clock = DeviceClock()
        var raw = UInt32.max - 300
        var expected = Int64(raw)
        #expect(clock.advance(raw: raw, frames: 256) == expected)
        for _ in 0..<4 {
            raw &+= 256
            expected += 256
            #expect(clock.advance(raw: raw, frames: 256) == expected)
        }
        #expect(expected > Int64(UInt32.max))
    }
}
