import Foundation

/// A place the agent knows the time zone of.
public struct KnownPlace: Sendable, Hashable {
  /// What the place is.
  public enum Kind: String, Sendable, Hashable {
    /// A city.
    case city
    /// A country whose main territory keeps one time zone.
    case country
    /// A time zone itself: an IANA identifier, UTC/GMT or an abbreviation such as PST.
    case zone
  }

  /// The English name ("New York", "UTC", "Pacific Time").
  public var english: String
  /// The Chinese name ("纽约"); the English one where Chinese writes it the same way.
  public var chinese: String
  /// The IANA time zone identifier ("America/New_York").
  public var timeZoneIdentifier: String
  /// What the place is.
  public var kind: Kind

  /// Creates a place.
  public init(english: String, chinese: String, timeZoneIdentifier: String, kind: Kind) {
    self.english = english
    self.chinese = chinese
    self.timeZoneIdentifier = timeZoneIdentifier
    self.kind = kind
  }

  /// The name in `language`.
  public func name(in language: MessageLanguage) -> String {
    language == .chinese ? chinese : english
  }

  /// The time zone, nil only if the system does not know the identifier.
  public var timeZone: TimeZone? { TimeZone(identifier: timeZoneIdentifier) }
}

/// The built-in table of places and time zones: about 185 major cities and 60 countries
/// with one time zone, in English and Chinese, the names of common time zones and their
/// abbreviations (PST, CET, JST...), UTC/GMT, and IANA identifiers written as they are
/// ("Asia/Tokyo"). The rows are data in `PlaceDirectory+Table.swift`.
public enum PlaceDirectory {
  /// The place named exactly `name` (case, accents, dots and extra spaces do not matter), or nil.
  ///
  /// - Complexity: O(length of `name`); the table is indexed once.
  public static func lookup(_ name: String) -> KnownPlace? {
    let key = normalized(name)
    guard !key.isEmpty else { return nil }
    if let row = index[key] { return place(row) }
    return ianaPlace(name.trimmingCharacters(in: .whitespacesAndNewlines))
  }

  /// Every place of the table (not the IANA identifiers it also accepts), cities first.
  public static var allPlaces: [KnownPlace] { (cities + countries + zones).map(place) }

  /// Every name and alias of the table, as written there.
  static var allNames: [String] {
    (cities + countries + zones).flatMap { [$0.english, $0.chinese] + $0.aliases }
  }

  /// A name for the zone `identifier` in `language`: a city of the table whose name is the
  /// identifier's last part ("Asia/Tokyo" is 东京 in Chinese), else that last part with
  /// spaces ("America/Argentina/Buenos_Aires" is Buenos Aires), else the identifier.
  public static func name(ofZone identifier: String, in language: MessageLanguage) -> String {
    let city = cityPart(of: identifier)
    if let row = cities.first(where: { $0.zone == identifier && normalized($0.english) == normalized(city) })
    {
      return language == .chinese ? row.chinese : row.english
    }
    if let row = zones.first(where: { $0.zone == identifier && $0.english == identifier }) {
      return row.english
    }
    return city
  }

  private static func place(_ row: Row) -> KnownPlace {
    KnownPlace(english: row.english, chinese: row.chinese, timeZoneIdentifier: row.zone, kind: row.kind)
  }

  /// An IANA identifier written directly, in any case ("asia/tokyo").
  private static func ianaPlace(_ text: String) -> KnownPlace? {
    guard text.contains("/"), !text.contains(" ") else { return nil }
    let candidates = [text, canonicalIANACase(text)]
    for candidate in candidates {
      if let zone = TimeZone(identifier: candidate), zone.identifier.contains("/") {
        let identifier = zone.identifier
        return KnownPlace(
          english: name(ofZone: identifier, in: .english), chinese: name(ofZone: identifier, in: .chinese),
          timeZoneIdentifier: identifier, kind: .zone)
      }
    }
    return nil
  }

  /// "america/new_york" -> "America/New_York".
  private static func canonicalIANACase(_ text: String) -> String {
    text.split(separator: "/", omittingEmptySubsequences: false).map { part in
      part.split(separator: "_", omittingEmptySubsequences: false).map { word in
        word.prefix(1).uppercased() + word.dropFirst().lowercased()
      }.joined(separator: "_")
    }.joined(separator: "/")
  }

  private static func cityPart(of identifier: String) -> String {
    String(identifier.split(separator: "/").last ?? Substring(identifier)).replacingOccurrences(
      of: "_", with: " ")
  }

  /// Lowercased, without accents, dots or apostrophes, single spaces, no leading "the".
  static func normalized(_ name: String) -> String {
    var text = name.folding(
      options: [.caseInsensitive, .diacriticInsensitive], locale: Locale(identifier: "en_US_POSIX"))
    text = text.replacingOccurrences(of: ".", with: "").replacingOccurrences(of: "'", with: "")
      .replacingOccurrences(of: "’", with: "")
    var words = text.split(whereSeparator: \.isWhitespace)
    if words.count > 1, words.first == "the" { words.removeFirst() }
    return words.joined(separator: " ")
  }

  /// Every name and alias, normalized, to its row; the first row to claim a name keeps it.
  private static let index: [String: Row] = {
    var index: [String: Row] = [:]
    for row in cities + countries + zones {
      for name in [row.english, row.chinese] + row.aliases {
        let key = normalized(name)
        if index[key] == nil { index[key] = row }
      }
    }
    return index
  }()
}
