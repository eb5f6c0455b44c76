// A program that imports only SamplerKit (and Foundation), as the README's users write them:
// it loads a file into a buffer, plays it with an AudioPlayer, and feeds a PlayerNode with
// generated buffers for a while. Built with the package, so the public API is enough for it;
// run it with `swift run samplerkit-example FILE [SECONDS]` against a running JACK server.
import Foundation
import SamplerKit

let arguments = CommandLine.arguments
guard arguments.count >= 2 else {
    FileHandle.standardError.write("usage: samplerkit-example FILE [SECONDS]\n".data(using: .utf8)!)
    exit(64)
}
let url = URL(fileURLWithPath: arguments[1])
let seconds = arguments.count > 2 ? Double(arguments[2]) ?? 5 : 5
do {
    var configuration = AudioSession.Configuration()
    configuration.name = "samplerkit-example"
    let session = try AudioSession(configuration: configuration)
    defer { session.close() }

    let file = try AudioFile(forReading: url)
    let buffer = try AudioBuffer(file: file)
    print("\(url.lastPathComponent): \(file.length) frames, \(file.processingFormat.channelCount) channels at \(file.processingFormat.sampleRate) Hz")

    let player = try AudioPlayer(contentsOf: url, session: session)
    player.play()

    let node = try PlayerNode(session: session)
    try node.scheduleBuffer(buffer)
    let rate = session.sampleRate
    let blocks = Int(seconds * rate / 1024)
    for k in 0..<blocks {
        let tone = (0..<1024).map { i in Float(sin(2 * Double.pi * 440 * Double(k * 1024 + i) / rate)) * 0.1 }
        while true {
            do { try node.scheduleBuffer(AudioBuffer(channels: [tone], sampleRate: rate)); break } catch {
                Thread.sleep(forTimeInterval: 0.01)  // the schedule is full: wait for room
            }
        }
        if k == 0 { node.play() }
    }
    Thread.sleep(forTimeInterval: seconds + 0.5)
    player.stop()
    node.stop()
    let lost = session.lostAudio
    print("lost \(lost.lostPeriods) periods (\(lost.lostFrames) frames), \(lost.lateStarts) late starts, \(lost.xruns) xruns")
} catch {
    FileHandle.standardError.write("samplerkit-example: \(error)\n".data(using: .utf8)!)
    exit(1)
}
