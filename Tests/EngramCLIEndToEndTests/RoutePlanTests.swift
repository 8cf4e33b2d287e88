import EngramTestSupport
import Foundation
import Testing

/// `engram route --json` prints a request's plan as `steps`, the top-level fields describing
/// the first step; a single request has one step.
@Suite(.timeLimit(.minutes(5)), .watchdog) struct RoutePlanTests {
  @Test func aCompoundRequestPrintsEveryStepWithItsCondition() async throws {
    let result = try await engram(
      "route", "--json", "--now", "2025-06-11T10:00:00+08:00",
      "note down that the spare key is under the blue pot, and if it rains on Friday remind me on Thursday at 6pm to bring the cushions in",
      "what's 12 times 12")
    #expect(result.status == 0, "\(result.standardError)")
    let objects = try jsonLines(result.standardOutput)
    try #require(objects.count == 2)
    let steps = try #require(objects[0]["steps"] as? [[String: Any]])
    #expect(steps.map { $0["skill"] as? String } == ["note.create", "reminder.create"])
    #expect(objects[0]["skill"] as? String == "note.create")
    #expect(steps[0]["condition"] == nil)
    let condition = try #require(steps[1]["condition"] as? [String: Any])
    #expect(condition["kind"] as? String == "weather")
    #expect(condition["about"] as? String == "rain")
    #expect(condition["negated"] as? Bool == false)
    #expect((condition["when"] as? String)?.hasPrefix("2025-06-13") == true)
    let arguments = try #require(steps[1]["arguments"] as? [String: Any])
    #expect(arguments["when"] as? String == "2025-06-12T18:00:00+08:00")

    let single = try #require(objects[1]["steps"] as? [[String: Any]])
    #expect(single.count == 1)
    #expect(single.first?["skill"] as? String == "calculator")
    #expect(objects[1]["skill"] as? String == "calculator")
  }
}
