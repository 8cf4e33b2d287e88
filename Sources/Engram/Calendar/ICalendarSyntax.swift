import Foundation

/// One property of an iCalendar component: `NAME;PARAM=VALUE:VALUE`, unfolded.
struct ICalendarProperty: Equatable, Sendable {
  /// The name, upper-cased.
  var name: String
  /// The parameters, names upper-cased, values unquoted.
  var parameters: [String: String]
  /// The raw value (still escaped for TEXT values).
  var value: String
  /// The physical line the property begins on.
  var line: Int
}

/// One component (`BEGIN:NAME` ... `END:NAME`) with its properties and nested components.
struct ICalendarComponent: Equatable, Sendable {
  /// The name, upper-cased (`VCALENDAR`, `VEVENT`, `VTODO`, `VALARM`, `VTIMEZONE`, ...).
  var name: String
  /// The line of its `BEGIN`.
  var line: Int
  /// Its properties, in file order.
  var properties: [ICalendarProperty] = []
  /// Its nested components, in file order.
  var components: [ICalendarComponent] = []

  /// The first property named `name`.
  func property(_ name: String) -> ICalendarProperty? {
    properties.first { $0.name == name }
  }
}

/// The lexical layer of RFC 5545: content lines, folding, TEXT escaping.
enum ICalendarSyntax {
  // MARK: Reading

  /// The calendars of a file: its lines unfolded (a line beginning with a space or a tab
  /// continues the previous one), each parsed, and nested into components.
  /// - Throws: `ICalendarError` with the line: invalid UTF-8, a file not beginning with
  ///   `BEGIN:VCALENDAR`, a malformed line, an `END` without its `BEGIN`, a component left open.
  static func parse(_ data: Data) throws(ICalendarError) -> [ICalendarComponent] {
    var bytes = [UInt8](data)
    if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { bytes.removeFirst(3) }
    var logical: [(line: Int, text: String)] = []
    var current: [UInt8] = []
    var currentLine = 0
    var lineNumber = 0
    func finish() throws(ICalendarError) {
      guard currentLine > 0 else { return }
      guard let text = String(validating: current, as: UTF8.self) else {
        throw ICalendarError(line: currentLine, .invalidUTF8)
      }
      logical.append((currentLine, text))
      current.removeAll(keepingCapacity: true)
      currentLine = 0
    }
    var start = 0
    while start < bytes.count {
      lineNumber += 1
      var end = start
      while end < bytes.count, bytes[end] != 0x0A { end += 1 }
      var stop = end
      if stop > start, bytes[stop - 1] == 0x0D { stop -= 1 }
      let physical = bytes[start..<stop]
      if let first = physical.first, first == 0x20 || first == 0x09, currentLine > 0 {
        current.append(contentsOf: physical.dropFirst())
      } else {
        try finish()
        if !physical.allSatisfy({ $0 == 0x20 || $0 == 0x09 }) {
          current.append(contentsOf: physical)
          currentLine = lineNumber
        }
      }
      start = end + 1
    }
    try finish()

    var calendars: [ICalendarComponent] = []
    var open: [ICalendarComponent] = []
    for (line, text) in logical {
      if open.isEmpty && calendars.isEmpty
        && text.trimmingCharacters(in: .whitespaces).uppercased() != "BEGIN:VCALENDAR"
      {
        throw ICalendarError(line: line, .notCalendar)
      }
      let property = try contentLine(text, line: line)
      if property.name == "BEGIN" {
        let name = property.value.uppercased()
        if open.isEmpty && name != "VCALENDAR" { throw ICalendarError(line: line, .notCalendar) }
        open.append(ICalendarComponent(name: name, line: line))
      } else if property.name == "END" {
        let name = property.value.uppercased()
        guard let last = open.last, last.name == name else {
          throw ICalendarError(line: line, .unexpectedEnd(component: name))
        }
        let done = open.removeLast()
        if open.isEmpty {
          calendars.append(done)
        } else {
          open[open.count - 1].components.append(done)
        }
      } else {
        guard !open.isEmpty else {
          throw ICalendarError(line: line, calendars.isEmpty ? .notCalendar : .malformedLine)
        }
        open[open.count - 1].properties.append(property)
      }
    }
    if let unclosed = open.last {
      throw ICalendarError(line: unclosed.line, .unterminated(component: unclosed.name))
    }
    guard !calendars.isEmpty else { throw ICalendarError(line: max(1, lineNumber), .notCalendar) }
    return calendars
  }

  /// One unfolded content line: `name *(";" param) ":" value`; a parameter value may be
  /// quoted (and then hold `;`, `:` and `,`).
  static func contentLine(_ text: String, line: Int) throws(ICalendarError) -> ICalendarProperty {
    let scalars = Array(text.unicodeScalars)
    var index = 0
    func isNameScalar(_ scalar: Unicode.Scalar) -> Bool {
      scalar == "-" || (scalar.isASCII && (CharacterSet.alphanumerics.contains(scalar)))
    }
    func readName() -> String {
      var name = String.UnicodeScalarView()
      while index < scalars.count, isNameScalar(scalars[index]) {
        name.append(scalars[index])
        index += 1
      }
      return String(name).uppercased()
    }
    let name = readName()
    guard !name.isEmpty else { throw ICalendarError(line: line, .malformedLine) }
    var parameters: [String: String] = [:]
    while index < scalars.count, scalars[index] == ";" {
      index += 1
      let parameter = readName()
      guard !parameter.isEmpty, index < scalars.count, scalars[index] == "=" else {
        throw ICalendarError(line: line, .malformedLine)
      }
      index += 1
      var values: [String] = []
      repeat {
        if index < scalars.count, scalars[index] == "," { index += 1 }
        var value = String.UnicodeScalarView()
        if index < scalars.count, scalars[index] == "\"" {
          index += 1
          while index < scalars.count, scalars[index] != "\"" {
            value.append(scalars[index])
            index += 1
          }
          guard index < scalars.count else { throw ICalendarError(line: line, .malformedLine) }
          index += 1
        } else {
          while index < scalars.count, ![";", ":", ","].contains(scalars[index]) {
            value.append(scalars[index])
            index += 1
          }
        }
        values.append(String(value))
      } while index < scalars.count && scalars[index] == ","
      parameters[parameter] = values.joined(separator: ",")
    }
    guard index < scalars.count, scalars[index] == ":" else {
      throw ICalendarError(line: line, .malformedLine)
    }
    var value = String.UnicodeScalarView()
    value.append(contentsOf: scalars[(index + 1)...])
    return ICalendarProperty(name: name, parameters: parameters, value: String(value), line: line)
  }

  /// A TEXT value unescaped: `\\`, `\;`, `\,`, `\n` and `\N` (an unknown escape is kept).
  static func unescapeText(_ value: String) -> String {
    guard value.contains("\\") else { return value }
    var result = ""
    var escaping = false
    for character in value {
      if escaping {
        switch character {
        case "n", "N": result.append("\n")
        case "\\", ";", ",": result.append(character)
        default:
          result.append("\\")
          result.append(character)
        }
        escaping = false
      } else if character == "\\" {
        escaping = true
      } else {
        result.append(character)
      }
    }
    if escaping { result.append("\\") }
    return result
  }

  // MARK: Writing

  /// A TEXT value escaped: `\` `;` `,` and line breaks (CRLF, CR or LF become `\n`); other
  /// control characters, which RFC 5545 does not allow in a value, are left out.
  static func escapeText(_ text: String) -> String {
    var result = String.UnicodeScalarView()
    var previousCR = false
    for scalar in text.unicodeScalars {
      defer { previousCR = scalar == "\r" }
      switch scalar {
      case "\\", ";", ",":
        result.append("\\")
        result.append(scalar)
      case "\r":
        result.append(contentsOf: "\\n".unicodeScalars)
      case "\n":
        if !previousCR { result.append(contentsOf: "\\n".unicodeScalars) }
      case "\t":
        result.append(scalar)
      default:
        if scalar.value < 0x20 || scalar.value == 0x7F { continue }
        result.append(scalar)
      }
    }
    return String(result)
  }

  /// A content line folded at 75 octets (RFC 5545 3.1): each continuation begins with a
  /// space, and no UTF-8 sequence is split. Ends with CRLF.
  static func fold(_ line: String) -> String {
    let limit = 75
    guard line.utf8.count > limit else { return line + "\r\n" }
    var result = ""
    var length = 0
    for scalar in line.unicodeScalars {
      let width = String(scalar).utf8.count
      if length + width > limit {
        result.append("\r\n ")
        length = 1
      }
      result.unicodeScalars.append(scalar)
      length += width
    }
    return result + "\r\n"
  }
}
