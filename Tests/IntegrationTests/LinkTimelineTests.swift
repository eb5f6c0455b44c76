import Foundation
import JACKTestSupport
import SamplerKit
import Sync
import SoundFiles
import Testing

/// Link's timeline as captured: beats and host times on one line.
struct LinkTimelineTests {
    @Test func beatsAndHostTimesAreOneLine() {
        let t = LinkTimeline(tempo: 120, quantum: 4, referenceTime: 1_000_000, beatAtReference: 8, isPlaying: true, playingChangeTime: 0)
        #expect(t.beat(atHostTime: 1_000_000) == 8)
        #expect(t.beat(atHostTime: 1_500_000) == 9)
        #expect(t.beat(atHostTime: 0) == 6)
        #expect(t.hostTime(atBeat: 12) == 3_000_000)
        #expect(t.beat(atHostTime: Int64(t.hostTime(atBeat: 10.25))) == 10.25)
    }
}
