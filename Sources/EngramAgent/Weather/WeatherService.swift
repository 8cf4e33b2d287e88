/// A place a weather service found by name.
public struct GeocodedPlace: Sendable, Hashable {
  /// Its name, in the language asked for when the service has it.
  public var name: String
  /// Degrees north.
  public var latitude: Double
  /// Degrees east.
  public var longitude: Double
  /// The country, when the service says.
  public var country: String?

  /// Creates a place.
  public init(name: String, latitude: Double, longitude: Double, country: String? = nil) {
    self.name = name
    self.latitude = latitude
    self.longitude = longitude
    self.country = country
  }
}

/// A calendar day as a forecast names it (the place's own date, no time zone).
public struct CalendarDay: Sendable, Hashable, Comparable, CustomStringConvertible {
  /// The year.
  public var year: Int
  /// The month, 1-12.
  public var month: Int
  /// The day of the month.
  public var day: Int

  /// Creates a day.
  public init(year: Int, month: Int, day: Int) {
    self.year = year
    self.month = month
    self.day = day
  }

  /// Reads `YYYY-MM-DD`; nil for anything else.
  public init?(iso8601 text: String) {
    let parts = text.split(separator: "-")
    guard parts.count == 3, parts[0].count == 4, let year = Int(parts[0]), let month = Int(parts[1]),
      let day = Int(parts[2]), (1...12).contains(month), (1...31).contains(day)
    else { return nil }
    self.init(year: year, month: month, day: day)
  }

  public static func < (lhs: CalendarDay, rhs: CalendarDay) -> Bool {
    (lhs.year, lhs.month, lhs.day) < (rhs.year, rhs.month, rhs.day)
  }

  /// `2025-06-12`.
  public var description: String {
    let month = month < 10 ? "0\(month)" : "\(month)"
    let day = day < 10 ? "0\(day)" : "\(day)"
    return "\(year)-\(month)-\(day)"
  }
}

/// The weather now.
public struct CurrentWeather: Sendable, Hashable {
  /// Air temperature 2 m above ground, °C.
  public var temperature: Double
  /// The WMO weather code, when the service gave one.
  public var weatherCode: Int?

  /// Creates current conditions.
  public init(temperature: Double, weatherCode: Int?) {
    self.temperature = temperature
    self.weatherCode = weatherCode
  }
}

/// One day of a forecast.
public struct DailyForecast: Sendable, Hashable {
  /// The day, in the place's own calendar.
  public var day: CalendarDay
  /// The lowest temperature, °C, when known.
  public var minimum: Double?
  /// The highest temperature, °C, when known.
  public var maximum: Double?
  /// The highest chance of precipitation during the day, in percent, when known.
  public var precipitationProbability: Int?
  /// The day's most severe WMO weather code, when known.
  public var weatherCode: Int?

  /// Creates a day's forecast.
  public init(
    day: CalendarDay, minimum: Double?, maximum: Double?, precipitationProbability: Int?, weatherCode: Int?
  ) {
    self.day = day
    self.minimum = minimum
    self.maximum = maximum
    self.precipitationProbability = precipitationProbability
    self.weatherCode = weatherCode
  }
}

/// Current conditions and the days ahead at one place.
public struct WeatherForecast: Sendable, Hashable {
  /// The place's IANA time zone, when the service says.
  public var timeZoneIdentifier: String?
  /// The weather now, when the service gave it.
  public var current: CurrentWeather?
  /// Today and the days after it, in order.
  public var days: [DailyForecast]

  /// Creates a forecast.
  public init(timeZoneIdentifier: String?, current: CurrentWeather?, days: [DailyForecast]) {
    self.timeZoneIdentifier = timeZoneIdentifier
    self.current = current
    self.days = days
  }
}

/// Why the weather service gave no answer.
public enum WeatherError: Error, Sendable, Hashable {
  /// A base URL (`ENGRAM_WEATHER_URL`, `ENGRAM_GEOCODING_URL`) is not an http(s) URL.
  case invalidBaseURL(String)
  /// Plain http to a host other than this machine (it would send the user's city in clear).
  case insecureEndpoint(host: String)
  /// No answer within the timeout.
  case timedOut(seconds: Double)
  /// The service could not be reached (refused, no route, DNS).
  case unreachable(reason: String)
  /// The service answered with a status outside 200-299.
  case httpStatus(code: Int)
  /// The answer was not the JSON the service documents.
  case malformedResponse(reason: String)
}

/// Where `weather.current` gets place coordinates and forecasts.
public protocol WeatherService: Sendable {
  /// The best place named `name`, nil when the service knows none.
  /// - Parameters:
  ///   - name: the place as the user named it.
  ///   - language: the language place names come back in, when the service has it.
  /// - Throws: `WeatherError`.
  func locate(_ name: String, language: MessageLanguage) async throws -> GeocodedPlace?

  /// Current conditions and the daily forecast (about a week) at a place.
  /// - Throws: `WeatherError`.
  func forecast(latitude: Double, longitude: Double) async throws -> WeatherForecast
}
