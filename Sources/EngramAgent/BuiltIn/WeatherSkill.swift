import Foundation

/// `weather.current`: the weather now, or a day's forecast, for a city the request names or
/// the user's home city (the `home_city` preference); asks which city when there is neither.
public struct WeatherSkill: Skill {
  /// The preference that holds the user's home city ("my home city is Lisbon", 我住在北京).
  public static let homeCityKey = "home_city"

  private let service: any WeatherService

  /// Creates the skill over `service`.
  public init(service: any WeatherService) { self.service = service }

  /// Creates the skill over Open-Meteo at the base URLs `ENGRAM_WEATHER_URL` and
  /// `ENGRAM_GEOCODING_URL` name in `environment` (read once, here), else the public API.
  public init(environment: [String: String] = ProcessInfo.processInfo.environment) {
    self.init(service: OpenMeteoWeatherService(configuration: .fromEnvironment(environment)))
  }

  public var id: String { "weather.current" }
  public var displayName: String { "Weather" }
  public var description: String {
    "Tells the current weather, or a day's low, high and chance of rain, for a city or the user's home city."
  }
  public var inputSchema: SkillInputSchema {
    SkillInputSchema([
      SkillParameter("city", .string, required: false, description: "the city; default the user's home city"),
      SkillParameter(
        "day", .date, required: false,
        description: "the day (today, tomorrow, a weekday or a date); default now"),
    ])
  }
  public var hasSideEffects: Bool { false }
  public var requiresConfirmation: Bool { false }
  /// Two requests (place, then forecast) of at most five seconds each, and some slack.
  public var timeout: Duration { .seconds(15) }
  public var category: String { "utility" }
  public var tags: Set<String> { ["utility", "personal"] }

  /// `city` when the request names a city or country (not a time zone such as PST), and
  /// `day` when it names a date (as the written text when the date cannot be read).
  public func extractArguments(from text: String, clock: AgentClock) -> SkillArguments {
    var arguments = SkillArguments()
    if let mention = PlaceExtractor(clock: clock).find(in: text), mention.place?.kind != .zone {
      arguments["city"] = .string(mention.text)
    }
    switch DateExpressionParser(clock: clock).read(text) {
    case .date(let match): arguments["day"] = .date(match.date)
    case .unreadable(let written, _): arguments["day"] = .string(written)
    case nil: break
    }
    return arguments
  }

  // MARK: - Execution

  public func execute(arguments: SkillArguments, context: SkillContext) async throws -> SkillOutput {
    let language = context.language
    if case .string(let written) = arguments["day"] {
      throw SkillError.unreadableDate(name: "day", text: written)
    }
    var city = arguments["city"]?.stringValue?.trimmingCharacters(in: .whitespacesAndNewlines)
    if city?.isEmpty ?? true { city = try await homeCity(context) }
    guard let city else {
      return .text(WeatherReply.askCity(language))
    }
    let known = PlaceDirectory.lookup(city)
    let place: GeocodedPlace
    let forecast: WeatherForecast
    do {
      // The table's English name finds a known place more surely than a translation.
      let query = known.map { $0.kind == .zone ? city : $0.english } ?? city
      guard let found = try await service.locate(query, language: language) else {
        return .text(WeatherReply.unknownCity(city, language))
      }
      place = found
      forecast = try await service.forecast(latitude: found.latitude, longitude: found.longitude)
    } catch let error as WeatherError {
      return .text(FriendlyMessage.text(for: error, language: language))
    }
    let name = known.flatMap { $0.kind == .zone ? nil : $0.name(in: language) } ?? place.name
    let reply = WeatherReply(name: name, forecast: forecast, clock: context.clock, language: language)
    return .text(reply.render(day: arguments["day"]?.dateValue))
  }

  /// The home city from the turn's preferences, else from memory; nil when none is stored.
  /// Without a city in the request or a home city, asks for one: the next line is the city.
  public func prepare(arguments: SkillArguments, context: SkillContext) async throws -> SkillPreparation {
    let said = arguments["city"]?.stringValue?.trimmingCharacters(in: .whitespacesAndNewlines) ?? ""
    guard said.isEmpty, try await homeCity(context) == nil else { return .ready(arguments) }
    return .ask(parameter: "city", question: WeatherReply.askCity(context.language), arguments: arguments)
  }

  private func homeCity(_ context: SkillContext) async throws -> String? {
    if let city = context.turn.allPreferences[Self.homeCityKey], !city.isEmpty { return city }
    guard let stored = try await context.preferences.get(Self.homeCityKey), !stored.isEmpty else {
      return nil
    }
    return stored
  }
}

/// The sentences `weather.current` answers with.
struct WeatherReply {
  var name: String
  var forecast: WeatherForecast
  var clock: AgentClock
  var language: MessageLanguage

  static func askCity(_ language: MessageLanguage) -> String {
    switch language {
    case .english:
      return
        "Which city should I check the weather for? You can also tell me “my home city is Lisbon”, and I'll use it from then on."
    case .chinese: return "想查哪个城市的天气？也可以告诉我「我住在北京」，以后我就默认查那里。"
    }
  }

  static func unknownCity(_ city: String, _ language: MessageLanguage) -> String {
    switch language {
    case .english:
      return "I couldn't find a place called “\(city)”. Could you check the spelling, or name a nearby city?"
    case .chinese: return "我没找到叫「\(city)」的地方，能检查一下名字，或者换个附近的城市吗？"
    }
  }

  /// The weather now when `day` is nil or today (in the user's calendar), else that day's forecast.
  func render(day: Date?) -> String {
    let calendar = clock.calendar
    let today = Self.calendarDay(clock.now, calendar)
    let requested = day.map { Self.calendarDay($0, calendar) } ?? today
    if requested == today { return now(today: todayForecast(userToday: today)) }
    guard let first = forecast.days.first, let last = forecast.days.last else { return noForecast() }
    if requested < first.day { return past() }
    guard let forecastDay = forecast.days.first(where: { $0.day == requested }) else {
      return beyond(requested, last: last.day)
    }
    let isTomorrow =
      Self.calendarDay(calendar.date(byAdding: .day, value: 1, to: clock.now)!, calendar) == requested
    return on(forecastDay, isTomorrow: isTomorrow)
  }

  /// The place's forecast for the user's today, else its first day.
  private func todayForecast(userToday: CalendarDay) -> DailyForecast? {
    forecast.days.first { $0.day == userToday } ?? forecast.days.first
  }

  private func now(today: DailyForecast?) -> String {
    guard let current = forecast.current else {
      guard let today else { return noForecast() }
      return on(today, isTomorrow: false, isToday: true)
    }
    let temperature = Self.degrees(current.temperature)
    let conditions = current.weatherCode.map { WeatherCondition.words(for: $0, language: language) }
    let range = today.flatMap(range(of:))
    let rain = today?.precipitationProbability
    switch language {
    case .english:
      var text = "\(name) right now: \(temperature)"
      if let conditions { text += ", \(conditions)" }
      text += "."
      var parts: [String] = []
      if let range { parts.append(range) }
      if let rain { parts.append("\(rain)% chance of rain") }
      if !parts.isEmpty { text += " Today: " + parts.joined(separator: ", ") + "." }
      return text
    case .chinese:
      var text = "\(name)现在 \(temperature)"
      if let conditions { text += "，\(conditions)" }
      text += "。"
      var parts: [String] = []
      if let range { parts.append(range) }
      if let rain { parts.append("降水概率 \(rain)%") }
      if !parts.isEmpty { text += "今天" + parts.joined(separator: "，") + "。" }
      return text
    }
  }

  private func on(_ day: DailyForecast, isTomorrow: Bool, isToday: Bool = false) -> String {
    let label = dayLabel(day.day)
    var parts: [String] = []
    if let code = day.weatherCode { parts.append(WeatherCondition.words(for: code, language: language)) }
    if let range = range(of: day) { parts.append(range) }
    switch language {
    case .english:
      if let rain = day.precipitationProbability { parts.append("\(rain)% chance of rain") }
      let when = isToday ? "Today" : isTomorrow ? "Tomorrow" : "On"
      let body = parts.isEmpty ? "no details in the forecast" : parts.joined(separator: ", ")
      return "\(when) (\(label)) in \(name): \(body)."
    case .chinese:
      if let rain = day.precipitationProbability { parts.append("降水概率 \(rain)%") }
      let when = isToday ? "今天" : isTomorrow ? "明天" : ""
      let body = parts.isEmpty ? "预报里没有详细信息" : parts.joined(separator: "，")
      return "\(name)\(when)（\(label)）：\(body)。"
    }
  }

  private func range(of day: DailyForecast) -> String? {
    switch (day.minimum, day.maximum) {
    case (let low?, let high?):
      return language == .english
        ? "\(Self.number(low)) to \(Self.degrees(high))" : "\(Self.number(low)) 到 \(Self.degrees(high))"
    case (let low?, nil): return language == .english ? "low \(Self.degrees(low))" : "最低 \(Self.degrees(low))"
    case (nil, let high?):
      return language == .english ? "high \(Self.degrees(high))" : "最高 \(Self.degrees(high))"
    case (nil, nil): return nil
    }
  }

  private func beyond(_ day: CalendarDay, last: CalendarDay) -> String {
    switch language {
    case .english:
      return
        "I only have the forecast up to \(dayLabel(last)), so I can't tell the weather in \(name) on \(dayLabel(day)) yet."
    case .chinese: return "我只有到 \(dayLabel(last)) 的天气预报，还查不到\(name) \(dayLabel(day)) 的天气。"
    }
  }

  private func past() -> String {
    switch language {
    case .english:
      return "I can only tell the weather now and the forecast for the coming days, not past days."
    case .chinese: return "我只能查现在的天气和未来几天的预报，查不了过去的天气。"
    }
  }

  private func noForecast() -> String {
    switch language {
    case .english: return "The weather service had no forecast for \(name)."
    case .chinese: return "天气服务没有\(name)的预报。"
    }
  }

  /// `Thu 2025-06-12` / `2025-06-12 周四`.
  private func dayLabel(_ day: CalendarDay) -> String {
    var calendar = Calendar(identifier: .gregorian)
    calendar.timeZone = TimeZone(identifier: "UTC")!
    let weekday =
      calendar.date(from: DateComponents(year: day.year, month: day.month, day: day.day))
      .map { calendar.component(.weekday, from: $0) - 1 } ?? 0
    switch language {
    case .english: return "\(["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"][weekday]) \(day)"
    case .chinese: return "\(day) \(["周日", "周一", "周二", "周三", "周四", "周五", "周六"][weekday])"
    }
  }

  static func calendarDay(_ date: Date, _ calendar: Calendar) -> CalendarDay {
    let parts = calendar.dateComponents([.year, .month, .day], from: date)
    return CalendarDay(year: parts.year!, month: parts.month!, day: parts.day!)
  }

  /// `18°C` (rounded; never `-0°C`).
  static func degrees(_ value: Double) -> String { "\(number(value))°C" }

  static func number(_ value: Double) -> String {
    // JSON numbers are finite, but a broken service may send one no Int holds.
    guard abs(value) < 10_000 else { return String(format: "%.0f", value) }
    return String(Int(value.rounded()))
  }
}
