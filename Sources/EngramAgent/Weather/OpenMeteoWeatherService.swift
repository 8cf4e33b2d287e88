import Foundation

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// A `WeatherService` speaking Open-Meteo's forecast API (`/v1/forecast`) and geocoding API
/// (`/v1/search`), or any service compatible with them.
public final class OpenMeteoWeatherService: WeatherService {
  /// Where the two APIs live and how long a request may take.
  public struct Configuration: Sendable, Hashable {
    /// The forecast API's base URL (without `/v1/forecast`). Default `https://api.open-meteo.com`.
    public var forecastBaseURL: String
    /// The geocoding API's base URL (without `/v1/search`). Default
    /// `https://geocoding-api.open-meteo.com`.
    public var geocodingBaseURL: String
    /// How long one request may take. Default 5 seconds.
    public var timeout: Duration

    /// The public Open-Meteo forecast API.
    public static let defaultForecastBaseURL = "https://api.open-meteo.com"
    /// The public Open-Meteo geocoding API.
    public static let defaultGeocodingBaseURL = "https://geocoding-api.open-meteo.com"
    /// The environment variable naming the forecast API's base URL.
    public static let forecastURLVariable = "ENGRAM_WEATHER_URL"
    /// The environment variable naming the geocoding API's base URL.
    public static let geocodingURLVariable = "ENGRAM_GEOCODING_URL"

    /// Creates a configuration.
    public init(
      forecastBaseURL: String = defaultForecastBaseURL, geocodingBaseURL: String = defaultGeocodingBaseURL,
      timeout: Duration = .seconds(5)
    ) {
      self.forecastBaseURL = forecastBaseURL
      self.geocodingBaseURL = geocodingBaseURL
      self.timeout = timeout
    }

    /// The base URLs from `ENGRAM_WEATHER_URL` and `ENGRAM_GEOCODING_URL` when set and not
    /// empty, else the public Open-Meteo APIs.
    public static func fromEnvironment(
      _ environment: [String: String] = ProcessInfo.processInfo.environment, timeout: Duration = .seconds(5)
    ) -> Configuration {
      func value(_ name: String) -> String? {
        environment[name].flatMap { $0.trimmingCharacters(in: .whitespaces).isEmpty ? nil : $0 }
      }
      return Configuration(
        forecastBaseURL: value(forecastURLVariable) ?? defaultForecastBaseURL,
        geocodingBaseURL: value(geocodingURLVariable) ?? defaultGeocodingBaseURL, timeout: timeout)
    }
  }

  /// The configuration it was created with.
  public let configuration: Configuration
  private let session: URLSession

  /// Creates a service; nothing is sent until a request.
  public init(configuration: Configuration = .fromEnvironment()) {
    self.configuration = configuration
    let sessionConfiguration = URLSessionConfiguration.ephemeral
    // A backstop only: the Linux session truncates fractions of a second (see `send`).
    let seconds = Self.seconds(configuration.timeout).rounded(.up) + 1
    sessionConfiguration.timeoutIntervalForRequest = seconds
    sessionConfiguration.timeoutIntervalForResource = seconds
    self.session = URLSession(configuration: sessionConfiguration)
  }

  deinit { session.invalidateAndCancel() }

  /// `GET {geocoding}/v1/search?name=…&count=1&language=en|zh&format=json`.
  public func locate(_ name: String, language: MessageLanguage) async throws -> GeocodedPlace? {
    let url = try Self.endpoint(
      configuration.geocodingBaseURL, path: "search",
      query: [
        URLQueryItem(name: "name", value: name), URLQueryItem(name: "count", value: "1"),
        URLQueryItem(name: "language", value: language.rawValue), URLQueryItem(name: "format", value: "json"),
      ])
    let data = try await send(url)
    return try Self.decodePlace(data)
  }

  /// `GET {forecast}/v1/forecast?latitude=…&longitude=…&current=…&daily=…&timezone=auto&forecast_days=7`.
  public func forecast(latitude: Double, longitude: Double) async throws -> WeatherForecast {
    let url = try Self.endpoint(
      configuration.forecastBaseURL, path: "forecast",
      query: [
        URLQueryItem(name: "latitude", value: String(latitude)),
        URLQueryItem(name: "longitude", value: String(longitude)),
        URLQueryItem(name: "current", value: "temperature_2m,weather_code"),
        URLQueryItem(
          name: "daily",
          value: "temperature_2m_max,temperature_2m_min,precipitation_probability_max,weather_code"),
        URLQueryItem(name: "timezone", value: "auto"), URLQueryItem(name: "forecast_days", value: "7"),
      ])
    let data = try await send(url)
    return try Self.decodeForecast(data)
  }

  // MARK: - Requests

  /// `{base}/v1/{path}?{query}`; a base that already ends in `/v1` is accepted.
  static func endpoint(_ base: String, path: String, query: [URLQueryItem]) throws(WeatherError) -> URL {
    var root = base.trimmingCharacters(in: .whitespaces)
    while root.hasSuffix("/") { root.removeLast() }
    guard let baseURL = URL(string: root), let scheme = baseURL.scheme?.lowercased(),
      scheme == "http" || scheme == "https", let host = baseURL.host, !host.isEmpty
    else { throw .invalidBaseURL(base) }
    if scheme == "http", !LanguageModelConfiguration.isLoopback(host) { throw .insecureEndpoint(host: host) }
    if !root.hasSuffix("/v1") { root += "/v1" }
    guard var components = URLComponents(string: root + "/" + path) else { throw .invalidBaseURL(base) }
    components.queryItems = query.isEmpty ? nil : query
    guard let url = components.url else { throw .invalidBaseURL(base) }
    return url
  }

  /// GETs `url` within the timeout and returns a 2xx body. The deadline is kept here
  /// (URLSession on Linux rounds sub-second timeouts down to zero, so its own limit is only a
  /// backstop) and the answer comes when it passes, not when the cancelled request ends.
  private func send(_ url: URL) async throws -> Data {
    let request = Self.request(url, timeout: configuration.timeout)
    let session = session
    let limit = configuration.timeout
    let seconds = Self.seconds(limit)
    let (data, response) = try await Deadline.run(
      limit: limit, timeoutError: { WeatherError.timedOut(seconds: seconds) }
    ) {
      do {
        return try await session.data(for: request)
      } catch let error as URLError where error.code == .timedOut {
        throw WeatherError.timedOut(seconds: seconds)
      } catch is CancellationError {
        throw CancellationError()
      } catch let error as URLError where error.code == .cancelled {
        throw CancellationError()
      } catch {
        throw WeatherError.unreachable(reason: error.localizedDescription)
      }
    }
    guard let http = response as? HTTPURLResponse else {
      throw WeatherError.malformedResponse(reason: "not an HTTP response")
    }
    guard (200..<300).contains(http.statusCode) else { throw WeatherError.httpStatus(code: http.statusCode) }
    return data
  }

  private static func request(_ url: URL, timeout: Duration) -> URLRequest {
    var request = URLRequest(url: url)
    request.httpMethod = "GET"
    request.setValue("application/json", forHTTPHeaderField: "Accept")
    request.timeoutInterval = seconds(timeout).rounded(.up) + 1
    return request
  }

  static func seconds(_ duration: Duration) -> Double {
    let (seconds, attoseconds) = duration.components
    return Double(seconds) + Double(attoseconds) / 1e18
  }

  // MARK: - Decoding

  private struct SearchBody: Decodable {
    struct Result: Decodable {
      var name: String
      var latitude: Double
      var longitude: Double
      var country: String?
    }
    // Open-Meteo leaves `results` out when nothing matches.
    var results: [Result]?
  }

  private struct ForecastBody: Decodable {
    struct Current: Decodable {
      var temperature_2m: Double?
      var weather_code: Int?
    }
    struct Daily: Decodable {
      var time: [String]
      var temperature_2m_max: [Double?]?
      var temperature_2m_min: [Double?]?
      var precipitation_probability_max: [Double?]?
      var weather_code: [Int?]?
    }
    var timezone: String?
    var current: Current?
    var daily: Daily?
  }

  /// The first result of a geocoding answer, nil when it has none.
  static func decodePlace(_ data: Data) throws(WeatherError) -> GeocodedPlace? {
    let body: SearchBody
    do {
      body = try JSONDecoder().decode(SearchBody.self, from: data)
    } catch {
      throw .malformedResponse(reason: "the geocoding answer is not the documented JSON")
    }
    guard let first = body.results?.first else { return nil }
    guard first.latitude.isFinite, first.longitude.isFinite, !first.name.isEmpty else {
      throw .malformedResponse(reason: "the geocoding result has no usable name or coordinates")
    }
    return GeocodedPlace(
      name: first.name, latitude: first.latitude, longitude: first.longitude, country: first.country)
  }

  /// Current conditions and days of a forecast answer.
  static func decodeForecast(_ data: Data) throws(WeatherError) -> WeatherForecast {
    let body: ForecastBody
    do {
      body = try JSONDecoder().decode(ForecastBody.self, from: data)
    } catch {
      throw .malformedResponse(reason: "the forecast answer is not the documented JSON")
    }
    let current = body.current.flatMap { current in
      current.temperature_2m.map { CurrentWeather(temperature: $0, weatherCode: current.weather_code) }
    }
    var days: [DailyForecast] = []
    if let daily = body.daily {
      for (index, text) in daily.time.enumerated() {
        guard let day = CalendarDay(iso8601: text) else {
          throw .malformedResponse(reason: "a forecast day is not YYYY-MM-DD")
        }
        func value<T>(_ series: [T?]?) -> T? {
          guard let series, index < series.count else { return nil }
          return series[index]
        }
        days.append(
          DailyForecast(
            day: day, minimum: value(daily.temperature_2m_min), maximum: value(daily.temperature_2m_max),
            precipitationProbability: value(daily.precipitation_probability_max).map {
              Int(min(max($0, 0), 100).rounded())
            },
            weatherCode: value(daily.weather_code)))
      }
    }
    guard current != nil || !days.isEmpty else {
      throw .malformedResponse(reason: "the forecast has neither current conditions nor days")
    }
    return WeatherForecast(timeZoneIdentifier: body.timezone, current: current, days: days)
  }
}
