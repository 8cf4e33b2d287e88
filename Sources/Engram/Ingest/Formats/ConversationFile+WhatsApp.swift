import Foundation

/// The start of one line of a WhatsApp export, `[31/12/23, 21:41:07] Name: text` or
/// `12/31/23, 9:41 PM - Name: text`: the date's three numbers (order not yet known), the time,
/// and what follows (`Name: text`, or a system line's text).
struct WhatsAppLine {
  /// The date's numbers in the order written; `fields[0]` has four digits for a year first.
  var fields: (Int, Int, Int)
  /// Whether the year comes first (`2023/12/31`).
  var yearFirst: Bool
  var hour: Int
  var minute: Int
  var second: Int
  /// What follows the date and time.
  var rest: Substring

  /// Marks WhatsApp puts around names and lines (left-to-right mark, byte-order mark, the
  /// embedding marks around phone numbers); they are not text.
  static func isDirectionMark(_ scalar: Unicode.Scalar) -> Bool {
    switch scalar.value {
    case 0x200E, 0x200F, 0xFEFF, 0x202A...0x202E, 0x2066...0x2069: return true
    default: return false
    }
  }

  static func isSpace(_ scalar: Unicode.Scalar) -> Bool {
    scalar == " " || scalar == "\u{202F}" || scalar == "\u{00A0}"
  }

  /// The parts of `line`, or nil when it does not start like a message.
  init?(_ line: String) {
    let scalars = line.unicodeScalars
    var index = scalars.startIndex
    func peek() -> Unicode.Scalar? { index < scalars.endIndex ? scalars[index] : nil }
    func take(_ scalar: Unicode.Scalar) -> Bool {
      guard peek() == scalar else { return false }
      index = scalars.index(after: index)
      return true
    }
    func number(_ maxDigits: Int) -> (value: Int, digits: Int)? {
      var value = 0
      var digits = 0
      while digits < maxDigits, let scalar = peek(), ("0"..."9").contains(scalar) {
        value = value * 10 + Int(scalar.value - 48)
        digits += 1
        index = scalars.index(after: index)
      }
      return digits == 0 ? nil : (value, digits)
    }
    func skipSpaces() {
      while let scalar = peek(), Self.isSpace(scalar) { index = scalars.index(after: index) }
    }
    while let scalar = peek(), Self.isDirectionMark(scalar) { index = scalars.index(after: index) }
    let bracketed = take("[")
    guard let first = number(4), let separator = peek(), ["/", ".", "-"].contains(separator) else {
      return nil
    }
    index = scalars.index(after: index)
    guard let second = number(2), take(separator), let third = number(4) else { return nil }
    _ = take(",")
    skipSpaces()
    guard let hour = number(2), take(":"), let minute = number(2), minute.digits == 2 else { return nil }
    var seconds = 0
    if take(":") {
      guard let value = number(2), value.digits == 2 else { return nil }
      seconds = value.value
    }
    skipSpaces()
    var hour24 = hour.value
    if let marker = peek(), "AaPp".unicodeScalars.contains(marker) {
      index = scalars.index(after: index)
      _ = take(".")
      guard take("M") || take("m") else { return nil }
      _ = take(".")
      guard (1...12).contains(hour24) else { return nil }
      let afternoon = marker == "P" || marker == "p"
      hour24 = hour24 % 12 + (afternoon ? 12 : 0)
      skipSpaces()
    }
    if bracketed {
      guard take("]") else { return nil }
      _ = take(" ")
    } else {
      guard take("-") || take("–") else { return nil }
      _ = take(" ")
    }
    guard hour24 < 24, minute.value < 60, seconds < 60 else { return nil }
    let yearFirst = first.digits == 4
    guard yearFirst || first.digits <= 2 else { return nil }
    fields = (first.value, second.value, third.value)
    self.yearFirst = yearFirst
    self.hour = hour24
    self.minute = minute.value
    self.second = seconds
    rest = Substring(scalars[index...])
  }

  /// The instant, reading the date in `order` (zone-less, as UTC); nil for a day that does not exist.
  func date(_ order: DateOrder) -> Date? {
    let (year, month, day): (Int, Int, Int)
    if yearFirst {
      (year, month, day) = fields
    } else {
      let (a, b, c) = fields
      (month, day) = order == .dmy ? (b, a) : (a, b)
      year = c < 100 ? 2000 + c : c
    }
    var calendar = Calendar(identifier: .gregorian)
    calendar.timeZone = TimeZone(secondsFromGMT: 0)!
    let components = DateComponents(
      year: year, month: month, day: day, hour: hour, minute: minute, second: second)
    guard components.isValidDate(in: calendar) else { return nil }
    return calendar.date(from: components)
  }
}

extension ConversationFile {
  /// Reads WhatsApp's "Export chat" text: one session per file (`whatsapp/<file name>`, or
  /// the folder's name for iOS's `_chat.txt`); every message is a turn of role `user` whose
  /// speaker is its sender (a chat is a log of many people); lines that do not start with a
  /// date continue the message before them; system lines (no `Name:`) and media
  /// (`<Media omitted>`, `<attached: …>`, `image omitted`, and iOS's notes, which start with a
  /// left-to-right mark) are skipped; a trailing
  /// `<This message was edited>` is removed and kept as `edited` in the metadata. Dates are
  /// read as `dateOrder` says, else as the file shows (a first number above 12 is a day, a
  /// second one a month), else day first; a date that contradicts the order refuses the
  /// file. Times carry no zone and are read as UTC, like every zone-less date in an import
  /// file.
  static func parseWhatsApp(
    _ bytes: UnsafeBufferPointer<UInt8>, path: String, defaultSession: String, dateOrder: DateOrder?
  ) throws(ImportError) -> ConversationFile {
    struct Pending {
      var header: WhatsAppLine
      var speaker: String?
      var text: String
      var line: Int
    }
    var messages: [Pending] = []
    var evidence: (order: DateOrder, line: Int)?
    var lineNumber = 0
    var start = bytes.startIndex
    var sawHeader = false
    while start < bytes.endIndex {
      let end = bytes[start...].firstIndex(of: 0x0A) ?? bytes.endIndex
      lineNumber += 1
      var line = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<end]), as: UTF8.self)
      start = end + 1
      if line.hasSuffix("\r") { line.removeLast() }
      guard let header = WhatsAppLine(line) else {
        if sawHeader {
          if !messages.isEmpty, messages[messages.count - 1].speaker != nil {
            messages[messages.count - 1].text += "\n" + line
          }
        } else if !isBlank(line.filter { !$0.unicodeScalars.allSatisfy(WhatsAppLine.isDirectionMark) }) {
          throw .malformed(path: path, line: lineNumber, reason: "not a WhatsApp message line")
        }
        continue
      }
      sawHeader = true
      if !header.yearFirst {
        let shows: DateOrder? = header.fields.0 > 12 ? .dmy : header.fields.1 > 12 ? .mdy : nil
        if let shows {
          if let known = dateOrder ?? evidence?.order, known != shows {
            throw .malformed(
              path: path, line: lineNumber,
              reason: "this date is \(shows == .dmy ? "day" : "month") first, "
                + (dateOrder == nil ? "earlier ones are not" : "not \(known.rawValue) as --date-order says"))
          }
          if evidence == nil { evidence = (shows, lineNumber) }
        }
      }
      // `Name: text`; a line without a name (someone joined, the subject changed) is the
      // system's, and so are the lines that continue it.
      var speaker: String?
      var text = ""
      if let colon = header.rest.range(of: ": ") {
        let name = String(
          header.rest[..<colon.lowerBound].unicodeScalars.filter { !WhatsAppLine.isDirectionMark($0) })
        if !name.isEmpty, !name.contains("\"") {
          speaker = name.trimmingCharacters(in: .whitespaces)
          text = String(header.rest[colon.upperBound...])
        }
      } else if header.rest.hasSuffix(":") {
        // `Name:` alone: the text starts on the next line.
        speaker = String(header.rest.dropLast().unicodeScalars.filter { !WhatsAppLine.isDirectionMark($0) })
      }
      messages.append(Pending(header: header, speaker: speaker, text: text, line: lineNumber))
    }
    let order = dateOrder ?? evidence?.order ?? .dmy
    let chat = whatsAppChatName(path: path, defaultSession: defaultSession)
    let name = "whatsapp/" + chat
    var turns: [ConversationTurn] = []
    for message in messages {
      guard let date = message.header.date(order) else {
        throw .malformed(
          path: path, line: message.line, reason: "the date is not a real day (read \(order.rawValue))")
      }
      guard let speaker = message.speaker else { continue }
      var text = message.text
      while let last = text.last, last.isWhitespace { text.removeLast() }
      var metadata: [String: JSONValue] = [:]
      for suffix in ["<This message was edited>", "<Diese Nachricht wurde bearbeitet>"]
      where text.hasSuffix(suffix) {
        text = String(text.dropLast(suffix.count))
        while let last = text.last, last.isWhitespace { text.removeLast() }
        metadata["edited"] = true
      }
      // iOS starts its own notes (encryption notice, media, deletions) with a left-to-right mark.
      guard !isBlank(text), text.unicodeScalars.first != "\u{200E}", !isWhatsAppMedia(text) else { continue }
      turns.append(
        ConversationTurn(
          role: "user", content: text, session: name, speaker: speaker, timestamp: date, metadata: metadata,
          sourceLine: message.line))
    }
    guard !turns.isEmpty else { throw .empty(path: path) }
    return ConversationFile(
      sessions: [
        ConversationSession(name: name, title: chat, startedAt: turns.first?.timestamp, turns: turns)
      ],
      format: .whatsapp)
  }

  /// Whether a message is a placeholder for media left out of the export.
  static func isWhatsAppMedia(_ text: String) -> Bool {
    let plain = String(text.unicodeScalars.filter { !WhatsAppLine.isDirectionMark($0) })
      .trimmingCharacters(in: .whitespaces)
    if plain == "<Media omitted>" || (plain.hasPrefix("<attached: ") && plain.hasSuffix(">")) { return true }
    let omitted = ["image", "video", "audio", "sticker", "GIF", "document", "Contact card"]
    return omitted.contains { plain == "\($0) omitted" } || plain.hasSuffix(" document omitted")
  }

  /// The chat's name: the file's name without `.txt`, or the folder's for iOS's `_chat.txt`
  /// (every iOS export has that name).
  static func whatsAppChatName(path: String, defaultSession: String) -> String {
    let url = URL(fileURLWithPath: defaultSession)
    let stem =
      url.pathExtension.lowercased() == "txt" ? url.deletingPathExtension().lastPathComponent : defaultSession
    if stem == "_chat", path != "-" {
      let folder = URL(fileURLWithPath: path).deletingLastPathComponent().lastPathComponent
      if !folder.isEmpty, folder != "/" { return folder }
    }
    return stem
  }
}
