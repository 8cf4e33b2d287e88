import Engram
import Foundation

/// Checks a reminder's kept condition when it comes due, with the agent's ``ConditionChecker``:
/// what `engram reminders`, chat and the web app hand `ReminderDelivery` (the engine keeps a
/// condition as text and cannot read it).
public struct ReminderConditions: ReminderConditionChecking {
  /// The checker (its forecast service answers weather conditions).
  public var checker: ConditionChecker
  /// The memory a calendar or memory condition reads, and where the home city is found.
  public var engine: MemoryEngine
  /// The zone the reminder's day is read in (the forecast day of "on Saturday").
  public var timeZone: TimeZone

  /// Creates a checker of reminders' conditions.
  public init(checker: ConditionChecker, engine: MemoryEngine, timeZone: TimeZone = .current) {
    self.checker = checker
    self.engine = engine
    self.timeZone = timeZone
  }

  /// Checks against `engine`, asking Open-Meteo (`ENGRAM_WEATHER_URL`, `ENGRAM_GEOCODING_URL`
  /// in `environment`) for the weather.
  public init(
    engine: MemoryEngine, environment: [String: String] = ProcessInfo.processInfo.environment,
    timeZone: TimeZone = .current
  ) {
    self.init(
      checker: ConditionChecker(
        weather: OpenMeteoWeatherService(configuration: .fromEnvironment(environment))),
      engine: engine, timeZone: timeZone)
  }

  /// What `reminder`'s condition comes to at `now`: held, failed, or unchecked (the condition
  /// cannot be read, or ``ConditionChecker`` could not tell).
  public func check(_ reminder: AgentItem, at now: Date) async -> AgentItemConditionOutcome {
    guard let text = reminder.condition, let condition = StepCondition(storedText: text) else {
      return AgentItemConditionOutcome(.unchecked, reason: "its stored condition could not be read")
    }
    let context = SkillContext(
      userText: condition.text, clock: .fixed(now, timeZone: timeZone), engine: engine)
    switch await checker.check(condition, context: context) {
    case .holds(let reason): return AgentItemConditionOutcome(.held, reason: reason)
    case .fails(let reason): return AgentItemConditionOutcome(.failed, reason: reason)
    case .unknown(let reason): return AgentItemConditionOutcome(.unchecked, reason: reason)
    }
  }
}
