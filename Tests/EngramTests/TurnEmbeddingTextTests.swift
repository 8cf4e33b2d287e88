import Foundation
import Testing

@testable import Engram

@Suite struct TurnEmbeddingTextTests {
  /// A turn is embedded with its time to the minute, as LoCoMo writes session times (UTC).
  @Test func embedsTheTimeTheSpeakerAndTheText() {
    let date = Date(timeIntervalSince1970: 1_683_554_160)  // 2023-05-08 13:56 UTC
    #expect(
      MemoryEngine.turnEmbeddingText(speaker: "Ann", content: "Hi!", date: date)
        == "[1:56 pm on 8 May, 2023] Ann: Hi!")
    #expect(
      MemoryEngine.turnEmbeddingText(
        speaker: nil, content: "A summary", date: date.addingTimeInterval(-13 * 3600))
        == "[12:56 am on 8 May, 2023] A summary")
    #expect(MemoryEngine.documentText(speaker: "", content: "x", date: date) == "[1:56 pm on 8 May, 2023] x")
  }
}
