import EngramStore
import Foundation

/// The time zones stored with agenda items (`agent_items.time_zone`): an IANA identifier, or a
/// fixed offset written `GMT+0530` (a file's VTIMEZONE without daylight saving or a location).
enum CalendarZone {
  /// The zone `name` names; nil when it names none.
  static func named(_ name: String) -> TimeZone? {
    if let offset = fixedOffset(name) { return TimeZone(secondsFromGMT: offset) }
    return TimeZone(identifier: name)
  }

  /// The name a zone is stored under: its IANA identifier, or `GMT+hhmm` for a fixed offset.
  static func name(of zone: TimeZone) -> String {
    if fixedOffset(zone.identifier) != nil || TimeZone(identifier: zone.identifier) == nil {
      return fixedName(zone.secondsFromGMT())
    }
    return zone.identifier
  }

  /// `GMT+0530` for 19,800 seconds (whole minutes).
  static func fixedName(_ seconds: Int) -> String {
    let minutes = abs(seconds) / 60
    return String(format: "GMT%@%02d%02d", seconds < 0 ? "-" : "+", minutes / 60, minutes % 60)
  }

  /// The offset of a `GMT+hhmm` (or `GMT-hhmm`) name in seconds; nil for any other name.
  static func fixedOffset(_ name: String) -> Int? {
    let scalars = Array(name.utf8)
    guard scalars.count == 8, name.hasPrefix("GMT"),
      scalars[3] == UInt8(ascii: "+") || scalars[3] == UInt8(ascii: "-"),
      scalars[4...].allSatisfy({ (0x30...0x39).contains($0) })
    else { return nil }
    let digits = scalars[4...].map { Int($0 - 0x30) }
    let seconds = (digits[0] * 10 + digits[1]) * 3600 + (digits[2] * 10 + digits[3]) * 60
    return scalars[3] == UInt8(ascii: "-") ? -seconds : seconds
  }

  /// The zone an item's wall-clock times are in: its stored zone, UTC for a `.utc` item (or one
  /// whose zone this system does not know).
  static func zone(of item: AgentItem) -> TimeZone {
    let utc = TimeZone(identifier: "UTC")!
    guard item.timeForm != .utc, let name = item.timeZone else { return utc }
    return named(name) ?? utc
  }
}
