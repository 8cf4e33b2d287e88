import Foundation

/// A date read from the command line, and whether it named a whole day.
public struct ParsedDate: Sendable, Hashable {
  /// The instant: midnight at the start of the day for `YYYY-MM-DD`.
  public var date: Date
  /// Whether only a day was given; `--until 2024-05-01` usually means "through the end of that day".
  public var isWholeDay: Bool

  /// Creates a parsed date.
  public init(date: Date, isWholeDay: Bool) {
    self.date = date
    self.isWholeDay = isWholeDay
  }

  /// The end of the span the text named: the next midnight for a whole day, else the instant itself.
  public var end: Date {
    isWholeDay ? date.addingTimeInterval(86_400) : date
  }
}

/// Parses `YYYY-MM-DD` and ISO 8601 timestamps (`2024-05-01T12:30:00Z`, `…+02:00`, `…12:30`).
///
/// Without a zone the text is read in `timeZone` (the user's by default).
public enum DateParser {
  /// The parsed date, or `nil` when the text is not one of the accepted forms or names no real day.
  public static func parse(_ text: String, timeZone: TimeZone = .current) -> ParsedDate? {
    var scanner = Scan(Array(text.trimmingCharacters(in: .whitespaces).utf8))
    guard let year = scanner.number(digits: 4), scanner.take(UInt8(ascii: "-")),
      let month = scanner.number(digits: 2), scanner.take(UInt8(ascii: "-")),
      let day = scanner.number(digits: 2)
    else { return nil }
    var components = DateComponents(year: year, month: month, day: day, hour: 0, minute: 0, second: 0)
    var zone = timeZone
    var fraction = 0.0
    let isWholeDay = scanner.atEnd
    if !isWholeDay {
      guard
        scanner.take(UInt8(ascii: "T")) || scanner.take(UInt8(ascii: "t")) || scanner.take(UInt8(ascii: " ")),
        let hour = scanner.number(digits: 2), scanner.take(UInt8(ascii: ":")),
        let minute = scanner.number(digits: 2)
      else { return nil }
      components.hour = hour
      components.minute = minute
      if scanner.take(UInt8(ascii: ":")) {
        guard let second = scanner.number(digits: 2) else { return nil }
        components.second = second
        if scanner.take(UInt8(ascii: ".")) || scanner.take(UInt8(ascii: ",")) {
          guard let digits = scanner.digitRun(), !digits.isEmpty else { return nil }
          fraction = Double("0." + digits) ?? 0
        }
      }
      if scanner.take(UInt8(ascii: "Z")) || scanner.take(UInt8(ascii: "z")) {
        zone = TimeZone(secondsFromGMT: 0)!
      } else if let sign = scanner.peek, sign == UInt8(ascii: "+") || sign == UInt8(ascii: "-") {
        _ = scanner.advance()
        guard let offsetHours = scanner.number(digits: 2), offsetHours <= 23 else { return nil }
        _ = scanner.take(UInt8(ascii: ":"))
        let offsetMinutes = scanner.number(digits: 2) ?? 0
        guard offsetMinutes < 60 else { return nil }
        let offset = (offsetHours * 3_600 + offsetMinutes * 60) * (sign == UInt8(ascii: "-") ? -1 : 1)
        guard let fixed = TimeZone(secondsFromGMT: offset) else { return nil }
        zone = fixed
      }
      guard scanner.atEnd else { return nil }
    }
    guard (1...12).contains(month), (1...31).contains(day), components.hour! < 24,
      components.minute! < 60, components.second! < 61
    else { return nil }
    var calendar = Calendar(identifier: .gregorian)
    calendar.timeZone = zone
    components.timeZone = zone
    guard components.isValidDate(in: calendar), let date = calendar.date(from: components) else {
      return nil
    }
    return ParsedDate(date: date.addingTimeInterval(fraction), isWholeDay: isWholeDay)
  }
}

/// A cursor over ASCII bytes.
private struct Scan {
  let bytes: [UInt8]
  var index = 0

  init(_ bytes: [UInt8]) {
    self.bytes = bytes
  }

  var atEnd: Bool { index == bytes.count }
  var peek: UInt8? { atEnd ? nil : bytes[index] }

  mutating func advance() -> UInt8? {
    guard let byte = peek else { return nil }
    index += 1
    return byte
  }

  mutating func take(_ byte: UInt8) -> Bool {
    guard peek == byte else { return false }
    index += 1
    return true
  }

  /// Exactly `digits` decimal digits.
  mutating func number(digits: Int) -> Int? {
    guard index + digits <= bytes.count else { return nil }
    var value = 0
    for offset in 0..<digits {
      let byte = bytes[index + offset]
      guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return nil }
      value = value * 10 + Int(byte - UInt8(ascii: "0"))
    }
    index += digits
    return value
  }

  mutating func digitRun() -> String? {
    let start = index
    while let byte = peek, byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") { index += 1 }
    return String(decoding: bytes[start..<index], as: UTF8.self)
  }
}
