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
}
