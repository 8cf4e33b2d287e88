import EngramTestSupport
import Foundation
import Testing

@testable import Engram
@testable import EngramAgent

/// The turn router's routine stages: a definition read from a sentence, a routine's name said
/// exactly or nearly routing to its steps, and a near miss that is not the name left alone.
@Suite(.timeLimit(.minutes(5)), .watchdog) struct TurnRouterRoutineTests {
  let clock = AgentClock.fixed(wallClock(2025, 6, 11, 10, in: Zones.shanghai), timeZone: Zones.shanghai)

  func router(_ routines: [Routine] = []) throws -> TurnRouter {
    let registry = SkillRegistry()
    try BuiltInSkills.register(in: registry)
    return TurnRouter(skills: SkillRouter(registry: registry), routines: routines)
  }

  let briefing = Routine(
    name: "Evening Wrap Up",
    steps: [
      Routine.Step(text: "show today's calendar", skill: "calendar.list"),
      Routine.Step(text: "remind me at 6pm to water the plants", skill: "reminder.create"),
    ], createdAt: Date(timeIntervalSince1970: 0))

  @Test(arguments: [
    "evening wrap up", "Evening Wrap Up!", "run my evening wrap up", "evening wrap upp please",
  ])
  func aRoutinesNameRoutesToItsSteps(_ text: String) async throws {
    let route = try await router([briefing]).route(text, clock: clock)
    #expect(route.source == .routine)
    #expect(route.routine == "Evening Wrap Up")
    #expect(route.plan.steps.map(\.skill) == ["calendar.list", "reminder.create"])
    #expect(route.plan.steps[1].arguments["when"] == .date(wallClock(2025, 6, 11, 18, in: Zones.shanghai)))
  }

  @Test func aDisabledRoutineOrAnotherNameIsAnOrdinaryRequest() async throws {
    var off = briefing
    off.enabled = false
    #expect(try await router([off]).route("evening wrap up", clock: clock).source != .routine)
    #expect(try await router([briefing]).route("weekly review", clock: clock).source != .routine)
  }

  @Test(arguments: [
    (
      "When I say evening wrap up, show today's calendar, my reminders and the weather", "evening wrap up",
      ["calendar.list", "reminder.list", "weather.current"]
    ),
    ("以后我说“早安”就看看今天的日程和我的提醒", "早安", ["calendar.list", "reminder.list"]),
    ("当我说晚安的时候，列出我的提醒", "晚安", ["reminder.list"]),
  ])
  func aDefinitionIsReadWithItsNameAndSteps(_ text: String, _ name: String, _ skills: [String]) async throws {
    let route = try await router().route(text, clock: clock)
    guard case .defineRoutine(let definition) = route.plan else {
      Issue.record("expected a definition, got \(route.plan)")
      return
    }
    #expect(route.source == .routine)
    #expect(definition.name == name)
    #expect(definition.unreadable.isEmpty)
    #expect(definition.steps.map(\.skill) == skills)
  }

  @Test func aStepNoSkillClaimsSurelyIsUnreadable() async throws {
    let definition = try await router().routineSteps(
      ["show my reminders", "blorp the flibbet"], clock: clock)
    #expect(definition.steps.map(\.skill) == ["reminder.list"])
    #expect(definition.unreadable == ["blorp the flibbet"])
  }

  @Test(arguments: [
    "say hello when I get home",
    "when I say the cabin, I mean my uncle's place near Lake Tahoe",
    "以后我说\"老地方\"就是指公司楼下那家星巴克",
  ])
  func aSentenceThatIsNoRoutineDefinesNothing(_ text: String) async throws {
    let route = try await router().route(text, clock: clock)
    if case .defineRoutine = route.plan { Issue.record("read as a routine definition") }
  }
}
