import Foundation

/// Whether a step's condition holds, and the sentence that says why.
public enum ConditionOutcome: Sendable, Hashable {
  /// The condition holds (after its negation): the step runs.
  case holds(String)
  /// It does not: the step is left out.
  case fails(String)
  /// It cannot be checked now (no forecast for that day, the service is down): the step is
  /// left out and the reply says why, never run as if it held.
  case unknown(String)

  /// The sentence for the user.
  public var reason: String {
    switch self {
    case .holds(let reason), .fails(let reason), .unknown(let reason): return reason
    }
  }
}

/// Checks a step's condition at the moment the step runs: the time in a zone from the clock,
/// the calendar from the agenda, a fact from the memory, the weather from the forecast.
public struct ConditionChecker: Sendable {
  /// The forecast service weather conditions ask; nil: weather conditions are unknown.
  public var weather: (any WeatherService)?

  /// Creates a checker.
  public init(weather: (any WeatherService)?) {
    self.weather = weather
  }

  /// Whether `condition` holds now, for a step of the turn in `context`.
  public func check(_ condition: StepCondition, context: SkillContext) async -> ConditionOutcome {
    let raw: ConditionOutcome
    switch condition.kind {
    case .time: raw = checkTime(condition, clock: context.clock)
    case .calendar: raw = await checkCalendar(condition, context: context)
    case .memory: raw = await checkMemory(condition, context: context)
    case .weather: raw = await checkWeather(condition, context: context)
    }
    guard condition.negated else { return raw }
    switch raw {
    case .holds(let reason): return .fails(reason)
    case .fails(let reason): return .holds(reason)
    case .unknown: return raw
    }
  }

  // MARK: - Time

  private func checkTime(_ condition: StepCondition, clock: AgentClock) -> ConditionOutcome {
    let zone = condition.zone.flatMap(TimeZone.init(identifier:)) ?? clock.timeZone
    var calendar = Calendar(identifier: .gregorian)
    calendar.timeZone = zone
    let parts = calendar.dateComponents([.hour, .minute], from: clock.now)
    let minutes = (parts.hour ?? 0) * 60 + (parts.minute ?? 0)
    let shown = String(format: "%02d:%02d", parts.hour ?? 0, parts.minute ?? 0)
    let place = condition.place ?? zone.identifier
    let holds: Bool
    let about = condition.about
    if about.hasPrefix("after ") || about.hasPrefix("before ") {
      let time = about.split(separator: " ").last.map(String.init) ?? "00:00"
      let pieces = time.split(separator: ":").compactMap { Int($0) }
      let limit = (pieces.first ?? 0) * 60 + (pieces.dropFirst().first ?? 0)
      holds = about.hasPrefix("after ") ? minutes >= limit : minutes < limit
    } else {
      let hour = parts.hour ?? 0
      switch about {
      case "morning": holds = (5..<12).contains(hour)
      case "afternoon": holds = (12..<18).contains(hour)
      case "evening": holds = hour >= 18
      case "night": holds = hour >= 21 || hour < 5
      case "working hours": holds = (9..<18).contains(hour)
      case "off hours": holds = !(9..<18).contains(hour)
      case "lunch": holds = (12..<14).contains(hour)
      case "day": holds = (7..<19).contains(hour)
      default: holds = false
      }
    }
    let reason = "it is \(shown) in \(place)"
    return holds ? .holds(reason) : .fails(reason)
  }

  // MARK: - Calendar

  private func checkCalendar(_ condition: StepCondition, context: SkillContext) async -> ConditionOutcome {
    let start = condition.when ?? context.clock.now
    let end = start.addingTimeInterval(3600)
    do {
      let events = try await context.agenda.agenda(kind: .event, from: start, to: end)
      let shown = TextCues.render(start, clock: context.clock, language: context.language)
      if events.isEmpty { return .holds("the calendar is free at \(shown)") }
      let titles = events.prefix(2).map { "“\($0.title)”" }.joined(separator: ", ")
      return .fails("the calendar has \(titles) at \(shown)")
    } catch {
      return .unknown("the calendar could not be read")
    }
  }

  // MARK: - Memory

  private func checkMemory(_ condition: StepCondition, context: SkillContext) async -> ConditionOutcome {
    do {
      let hits = try await context.memories.search(condition.about, k: 1)
      guard let hit = hits.first else { return .fails("nothing in memory says “\(condition.about)”") }
      return .holds("memory #\(hit.id) says “\(hit.text)”")
    } catch {
      return .unknown("memory could not be searched")
    }
  }

  // MARK: - Weather

  private func checkWeather(_ condition: StepCondition, context: SkillContext) async -> ConditionOutcome {
    guard let weather else { return .unknown("no weather service is configured") }
    var city = condition.place
    if city == nil || city!.isEmpty {
      city = context.turn.allPreferences[WeatherSkill.homeCityKey]
      if city == nil, let stored = try? await context.preferences.get(WeatherSkill.homeCityKey) {
        city = stored
      }
    }
    guard let city, !city.isEmpty else { return .unknown("I don't know which city's weather to check") }
    do {
      guard let place = try await weather.locate(city, language: context.language) else {
        return .unknown("the weather service does not know “\(city)”")
      }
      let forecast = try await weather.forecast(latitude: place.latitude, longitude: place.longitude)
      var calendar = Calendar(identifier: .gregorian)
      calendar.timeZone = context.clock.timeZone
      let target = condition.when ?? context.clock.now
      let parts = calendar.dateComponents([.year, .month, .day], from: target)
      let isToday = calendar.isDate(target, inSameDayAs: context.clock.now)
      let day = forecast.days.first {
        $0.day.year == parts.year && $0.day.month == parts.month && $0.day.day == parts.day
      }
      let code =
        condition.when == nil || isToday
        ? forecast.current?.weatherCode ?? day?.weatherCode : day?.weatherCode
      let shown =
        condition.when.map { TextCues.render($0, clock: context.clock, language: context.language) } ?? "now"
      guard day != nil || (condition.when == nil && forecast.current != nil) else {
        return .unknown("there is no forecast for \(shown) in \(city) yet")
      }
      let holds: Bool?
      switch condition.about {
      case "rain":
        holds =
          code.map { (51...67).contains($0) || (80...82).contains($0) || (95...99).contains($0) }
          ?? day?.precipitationProbability.map { $0 >= 50 }
      case "snow": holds = code.map { (71...77).contains($0) || (85...86).contains($0) }
      case "storm": holds = code.map { (95...99).contains($0) }
      case "clear": holds = code.map { (0...2).contains($0) }
      case "freeze": holds = (day?.minimum ?? forecast.current?.temperature).map { $0 <= 0 }
      case "cold":
        let limit = Self.degrees(in: condition.text) ?? 10
        holds = (day?.minimum ?? forecast.current?.temperature).map { $0 <= limit }
      case "cloudy": holds = code.map { (3...3).contains($0) || (45...48).contains($0) }
      case "heat":
        let limit = Self.degrees(in: condition.text) ?? 30
        holds = (day?.maximum ?? forecast.current?.temperature).map { $0 >= limit }
      default: holds = nil
      }
      guard let holds else { return .unknown("the forecast for \(shown) in \(city) does not say") }
      let reason =
        "the forecast for \(shown) in \(city) \(holds ? "says" : "does not say") \(condition.about)"
      return holds ? .holds(reason) : .fails(reason)
    } catch {
      return .unknown("the weather service could not be reached")
    }
  }

  /// The number of degrees a text names ("over 35 degrees", 35度以上), if any.
  static func degrees(in text: String) -> Double? {
    guard let match = text.firstMatch(of: /(-?\d+(?:\.\d+)?)\s*(?:°|degrees|度)/) else { return nil }
    return Double(match.1)
  }
}
