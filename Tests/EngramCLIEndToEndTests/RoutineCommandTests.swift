import EngramTestSupport
import Foundation
import Testing

/// `engram skills routine add NAME STEP... | list | remove NAME | enable|disable NAME` end to
/// end, `engram route NAME` showing a routine's steps, and a routine run by name in `engram chat`.
@Suite(.timeLimit(.minutes(5)), .watchdog) struct RoutineCommandTests {
  @Test func addListRouteAndRemoveARoutine() async throws {
    let scratch = try ScratchFolder()
    let db = try await scratch.initializedDatabase()
    let added = try await engram(
      "skills", "routine", "add", "--db", db, "evening wrap up", "show today's calendar",
      "show my reminders",
      "what's the weather in Paris")
    #expect(added.status == 0, "\(added.standardError)")
    #expect(added.standardOutput.contains("added routine evening wrap up: 3 steps"))

    let listed = try await engram("skills", "routine", "list", "--db", db, "--json")
    #expect(listed.status == 0, "\(listed.standardError)")
    let routines = try jsonLines(listed.standardOutput)
    try #require(routines.count == 1)
    #expect(routines[0]["name"] as? String == "evening wrap up")
    #expect(routines[0]["enabled"] as? Bool == true)
    let steps = try #require(routines[0]["steps"] as? [[String: Any]])
    #expect(steps.map { $0["skill"] as? String } == ["calendar.list", "reminder.list", "weather.current"])

    // Listed beside the skills.
    let skills = try await engram("skills", "--db", db, "--json")
    let kinds = try jsonLines(skills.standardOutput).map { ($0["kind"] as? String, $0["name"] as? String) }
    #expect(kinds.contains { $0.0 == "routine" && $0.1 == "evening wrap up" })

    // `route NAME` shows the routine's steps, nearly said too.
    let routed = try await engram(
      "route", "--db", db, "--json", "--now", "2025-06-11T10:00:00+08:00", "Evening Wrap Up!",
      "run evening wrap upp")
    #expect(routed.status == 0, "\(routed.standardError)")
    for object in try jsonLines(routed.standardOutput) {
      #expect(object["routine"] as? String == "evening wrap up")
      #expect(object["method"] as? String == "routine")
      let planned = try #require(object["steps"] as? [[String: Any]])
      #expect(
        planned.map { $0["skill"] as? String } == ["calendar.list", "reminder.list", "weather.current"])
    }

    let disabled = try await engram("skills", "routine", "disable", "--db", db, "evening wrap up")
    #expect(disabled.status == 0, "\(disabled.standardError)")
    let offRoute = try await engram("route", "--db", db, "--json", "evening wrap up")
    #expect(try jsonLines(offRoute.standardOutput).first?["routine"] == nil)

    let removed = try await engram("skills", "routine", "remove", "--db", db, "evening wrap up")
    #expect(removed.status == 0, "\(removed.standardError)")
    let empty = try await engram("skills", "routine", "list", "--db", db, "--json")
    #expect(empty.standardOutput.isEmpty)
    let again = try await engram("skills", "routine", "remove", "--db", db, "evening wrap up")
    #expect(again.status != 0)
    #expect(again.standardError.contains("no routine is named \"evening wrap up\""))
  }

  @Test func aStepNoSkillClaimsIsRefusedAndNothingIsStored() async throws {
    let scratch = try ScratchFolder()
    let db = try await scratch.initializedDatabase()
    let refused = try await engram(
      "skills", "routine", "add", "--db", db, "tidy", "show my reminders", "blorp the flibbet")
    #expect(refused.status == 64)
    #expect(refused.standardError.contains("blorp the flibbet"))
    let missing = try await engram("skills", "routine", "add", "--db", db, "tidy")
    #expect(missing.status == 64)
    let listed = try await engram("skills", "routine", "list", "--db", db, "--json")
    #expect(listed.standardOutput.isEmpty)
  }

  @Test func aRoutineDefinedInChatRunsByNameInChat() async throws {
    let scratch = try ScratchFolder()
    let db = try await scratch.initializedDatabase()
    let result = try await engram(
      "chat", "--db", db, "--now", "2025-06-11T10:00:00+08:00",
      input:
        "when I say wind down, remind me tomorrow at 9pm to stretch and show my reminders\nwind down\ny\n")
    #expect(result.status == 0, "\(result.standardError)")
    #expect(result.standardOutput.contains("Saved the routine “wind down”"))
    #expect(result.standardOutput.contains("Do these steps?"))
    let reminders = try await engram("reminders", "--db", db, "--json", "--now", "2025-06-11T10:00:00+08:00")
    #expect(try jsonLines(reminders.standardOutput).map { $0["title"] as? String } == ["stretch"])
  }
}
