import Foundation

/// `time.now`: tells the current date and time in the user's time zone, or in the zone of a
/// place the request names ("what time is it in Tokyo", "纽约现在几点").
public struct TimeNowSkill: Skill {
  /// Creates the skill.
  public init() {}

  public var id: String { "time.now" }
  public var displayName: String { "Current time" }
  public var description: String {
    "Tells the current time, date and weekday in the user's time zone, or in the time zone of a named city or zone."
  }
  public var inputSchema: SkillInputSchema {
    SkillInputSchema([
      SkillParameter(
        "zone", .string, required: false,
        description: "IANA time zone identifier (Asia/Tokyo) when a city or zone is named; default the user's"
      ),
      SkillParameter(
        "place", .string, required: false, description: "the city or zone as the user named it, for the reply"
      ),
    ])
  }
  public var hasSideEffects: Bool { false }
  public var requiresConfirmation: Bool { false }
  public var retryCount: Int { 1 }
  public var category: String { "utility" }
  public var tags: Set<String> { ["utility", "office"] }

  /// `zone` and `place` when the request names a place: both for a place the table knows,
  /// `place` alone for one it does not (the reply then says so).
  public func extractArguments(from text: String, clock: AgentClock) -> SkillArguments {
    guard let mention = PlaceExtractor(clock: clock).find(in: text) else { return SkillArguments() }
    var arguments: SkillArguments = ["place": .string(mention.text)]
    if let place = mention.place { arguments["zone"] = .string(place.timeZoneIdentifier) }
    return arguments
  }

  public func execute(arguments: SkillArguments, context: SkillContext) async throws -> SkillOutput {
    let language = context.language
    let placeText = arguments["place"]?.stringValue.flatMap { $0.isEmpty ? nil : $0 }
    let zoneText = arguments["zone"]?.stringValue.flatMap { $0.isEmpty ? nil : $0 }
    guard placeText != nil || zoneText != nil else {
      let rendered = TextCues.render(context.clock.now, clock: context.clock, language: language)
      let zone = context.clock.timeZone.identifier
      switch language {
      case .english: return .text("It's \(rendered), \(zone).")
      case .chinese: return .text("现在是 \(rendered)，\(zone)。")
      }
    }
    let known = placeText.flatMap(PlaceDirectory.lookup)
    guard let zone = zoneText.flatMap(Self.timeZone(named:)) ?? known?.timeZone else {
      let named = placeText ?? zoneText ?? ""
      switch language {
      case .english:
        return .text(
          "I don't know the time zone of “\(named)”. Try a major city or a zone such as Asia/Tokyo.")
      case .chinese: return .text("我不知道「\(named)」的时区。可以换一个大城市，或者直接说时区，比如 Asia/Tokyo。")
      }
    }
    let name =
      known.flatMap { $0.timeZone == zone ? $0.name(in: language) : nil }
      ?? PlaceDirectory.name(ofZone: zone.identifier, in: language)
    let now = context.clock.now
    let rendered = TextCues.render(now, clock: .fixed(now, timeZone: zone), language: language)
    let offset = Self.offset(zone.secondsFromGMT(for: now))
    // A region's identifier says where the offset comes from; UTC or GMT would only repeat it.
    let detail = zone.identifier.contains("/") ? "\(zone.identifier), \(offset)" : offset
    switch language {
    case .english: return .text("It's \(rendered) in \(name) (\(detail)).")
    case .chinese:
      return .text("\(name)现在是 \(rendered)（\(detail.replacingOccurrences(of: ", ", with: "，"))）。")
    }
  }

  /// The zone a table name, an abbreviation or an IANA identifier names.
  static func timeZone(named text: String) -> TimeZone? {
    PlaceDirectory.lookup(text)?.timeZone ?? TimeZone(identifier: text)
  }

  /// `UTC+9`, `UTC-3:30`, `UTC+0`.
  static func offset(_ seconds: Int) -> String {
    let sign = seconds < 0 ? "-" : "+"
    let minutes = abs(seconds) / 60
    let text = minutes % 60 == 0 ? "\(minutes / 60)" : String(format: "%d:%02d", minutes / 60, minutes % 60)
    return "UTC\(sign)\(text)"
  }
}
