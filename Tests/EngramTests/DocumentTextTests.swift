import EngramTestSupport
import Foundation
import Testing

@testable import Engram

@Suite(.timeLimit(.minutes(5)), .watchdog) struct DocumentTextTests {
  /// A turn is embedded with its time to the minute, as LoCoMo writes session times (UTC).
  @Test func embedsTheTimeTheSpeakerAndTheText() {
    let date = Date(timeIntervalSince1970: 1_683_554_160)  // 2023-05-08 13:56 UTC
    #expect(
      DocumentText.make(speaker: "Ann", content: "Hi!", date: date)
        == "[1:56 pm on 8 May, 2023] Ann: Hi!")
    #expect(
      DocumentText.make(
        speaker: nil, content: "A summary", date: date.addingTimeInterval(-13 * 3600))
        == "[12:56 am on 8 May, 2023] A summary")
    #expect(DocumentText.make(speaker: "", content: "x", date: date) == "[1:56 pm on 8 May, 2023] x")
  }

  /// A turn that follows another carries the start of it, on one line.
  @Test func aReplyCarriesTheStartOfTheTurnItAnswers() {
    let date = Date(timeIntervalSince1970: 1_683_554_160)
    let question = "Did you go to the pottery class?\nThe one on " + String(repeating: "x", count: 100)
    let text = DocumentText.make(
      speaker: "Bo", content: "Yes, last Saturday!", date: date, previous: question)
    #expect(
      text.hasPrefix(
        "[1:56 pm on 8 May, 2023] Bo: Yes, last Saturday! (replying to: Did you go to the pottery class? The one on"
      ))
    #expect(text.hasSuffix(")"))
    #expect(!text.contains("\n"))
    #expect(text.count == "[1:56 pm on 8 May, 2023] Bo: Yes, last Saturday! (replying to: )".count + 80)
    #expect(
      DocumentText.make(speaker: "Bo", content: "Hi", date: date, previous: "  ")
        == "[1:56 pm on 8 May, 2023] Bo: Hi")
  }
}
