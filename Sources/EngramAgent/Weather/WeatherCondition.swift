/// WMO weather interpretation codes, as Open-Meteo documents them, in words.
public enum WeatherCondition {
  /// The words for `code` in `language` ("light rain", 小雨); a plain phrase for a code
  /// Open-Meteo does not document.
  public static func words(for code: Int, language: MessageLanguage) -> String {
    guard let entry = table[code] else { return language == .chinese ? "天气状况不明" : "unusual conditions" }
    return language == .chinese ? entry.chinese : entry.english
  }

  /// Whether `code` is one Open-Meteo documents.
  public static func isDocumented(_ code: Int) -> Bool { table[code] != nil }

  /// Every documented code.
  public static var documentedCodes: [Int] { table.keys.sorted() }

  /// The codes and their words (data; https://open-meteo.com/en/docs, "WMO Weather interpretation codes").
  private static let table: [Int: (english: String, chinese: String)] = [
    0: ("clear sky", "晴"),
    1: ("mainly clear", "大致晴朗"),
    2: ("partly cloudy", "局部多云"),
    3: ("overcast", "阴"),
    45: ("fog", "有雾"),
    48: ("freezing fog", "冻雾"),
    51: ("light drizzle", "小毛毛雨"),
    53: ("moderate drizzle", "毛毛雨"),
    55: ("dense drizzle", "较强毛毛雨"),
    56: ("light freezing drizzle", "轻微冻毛毛雨"),
    57: ("dense freezing drizzle", "较强冻毛毛雨"),
    61: ("light rain", "小雨"),
    63: ("moderate rain", "中雨"),
    65: ("heavy rain", "大雨"),
    66: ("light freezing rain", "小冻雨"),
    67: ("heavy freezing rain", "大冻雨"),
    71: ("light snow", "小雪"),
    73: ("moderate snow", "中雪"),
    75: ("heavy snow", "大雪"),
    77: ("snow grains", "米雪"),
    80: ("light rain showers", "小阵雨"),
    81: ("moderate rain showers", "中阵雨"),
    82: ("violent rain showers", "强阵雨"),
    85: ("light snow showers", "小阵雪"),
    86: ("heavy snow showers", "大阵雪"),
    95: ("thunderstorms", "雷暴"),
    96: ("thunderstorms with light hail", "雷暴伴小冰雹"),
    99: ("thunderstorms with heavy hail", "雷暴伴大冰雹"),
  ]
}
