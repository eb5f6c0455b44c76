import Testing
@testable import JACKBackend

@Suite struct DeviceClockTests {
    @Test func stampsEachPeriodWithJACKsValue() {
        var clock = DeviceClock()
        #expect(clock.stamp(raw: 1000) == 1000)
        #expect(clock.stamp(raw: 1256) == 1256)
        #expect(clock.stamp(raw: 1512) == 1512)
        #expect(clock.stamp(raw: 1640) == 1640)
    }

    @Test func followsSkippedCyclesAtOnce() {
        var clock = DeviceClock()
        _ = clock.stamp(raw: 0)
        #expect(clock.stamp(raw: 768) == 768)
        #expect(clock.stamp(raw: 1024) == 1024)
    }

    @Test func aRepeatedOrEarlierValueIsTakenAsItIs() {
        var clock = DeviceClock()
        _ = clock.stamp(raw: 0)
        #expect(clock.stamp(raw: 512) == 512)
        #expect(clock.stamp(raw: 512) == 512)
        #expect(clock.stamp(raw: 256) == 256)
    }

    @Test func widensAcrossThe32BitWrap() {
        var clock = DeviceClock()
        var raw = UInt32.max - 300
        var expected = Int64(raw)
        #expect(clock.stamp(raw: raw) == expected)
        for step in [256, 256, 768, 256] {
            raw &+= UInt32(step)
            expected += Int64(step)
            #expect(clock.stamp(raw: raw) == expected)
        }
        #expect(expected > Int64(UInt32.max))
    }
}
