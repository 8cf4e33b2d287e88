import Foundation

/// The skills that need only the engine's topics (`SkillContext`), the clock and, for the
/// weather, a web service.
public enum BuiltInSkills {
  /// Every built-in skill, in the registration order that breaks rule-score ties;
  /// `weather.current` uses Open-Meteo at the base URLs `ENGRAM_WEATHER_URL` and
  /// `ENGRAM_GEOCODING_URL` name (read once, here).
  public static func all() -> [any Skill] {
    all(weather: OpenMeteoWeatherService(configuration: .fromEnvironment()))
  }

  /// Every built-in skill, `weather.current` asking `weather` for forecasts.
  public static func all(weather: any WeatherService) -> [any Skill] {
    [
      ReminderSkill(), CalendarSkill(), NoteSkill(), RememberSkill(), RecallSkill(), ForgetSkill(),
      TimeNowSkill(),
      CalculatorSkill(),
      AgendaListSkill(kind: .reminder), AgendaCancelSkill(kind: .reminder),
      AgendaUpdateSkill(kind: .reminder),
      AgendaListSkill(kind: .event), AgendaCancelSkill(kind: .event), AgendaUpdateSkill(kind: .event),
      WeatherSkill(service: weather),
    ]
  }

  /// Registers every built-in skill in `registry`.
  /// - Throws: `SkillRegistryError.duplicateID` if one is already registered, or the store's error.
  public static func register(in registry: SkillRegistry) throws {
    for skill in all() { try registry.register(skill) }
  }

  /// Registers every built-in skill in `registry`, `weather.current` asking `weather`.
  /// - Throws: `SkillRegistryError.duplicateID` if one is already registered, or the store's error.
  public static func register(in registry: SkillRegistry, weather: any WeatherService) throws {
    for skill in all(weather: weather) { try registry.register(skill) }
  }
}
