import Foundation

/// A conversation file parsed into sessions of turns, ready to be stored in one transaction.
///
/// Two formats are read:
/// - JSONL per `schemas/conversation-import.schema.json`: one OpenAI-style message per line,
///   `{"role", "content", "session"?, "speaker"?, "timestamp"?, "metadata"?}`. Blank lines
///   are skipped. Turns without a `session` go to one session named after the file.
/// - LoCoMo JSON: `speaker_a`, `speaker_b`, `session_N` lists of `{speaker, dia_id, text}`
///   and `session_N_date_time` (e.g. `1:56 pm on 8 May, 2023`).
///
/// Parsing is all-or-nothing: the first malformed line refuses the whole file, with its
/// line number, and nothing is stored.
public struct ConversationFile: Sendable, Equatable {
  /// The sessions, in file order.
  public var sessions: [ConversationSession]
  /// The format the file was read as.
  public var format: Format

  /// The formats a conversation file can have.
  public enum Format: String, Sendable {
    case jsonl
    case locomo
  }

  /// All turns of all sessions.
  public var turnCount: Int { sessions.reduce(0) { $0 + $1.turns.count } }

  public init(sessions: [ConversationSession], format: Format) {
    self.sessions = sessions
    self.format = format
  }

  /// The roles a turn may have.
  public static let roles: Set<String> = ["system", "user", "assistant", "tool"]

  /// Reads and parses a file; `-` reads standard input.
  ///
  /// - Throws: `ImportError` naming the path and line.
  public static func read(path: String) throws(ImportError) -> ConversationFile {
    // Standard input, FIFOs and pipes are read to their end like files; a folder is refused.
    let data = try InputFile.readAll(path)
    let defaultSession = path == "-" ? "stdin" : URL(fileURLWithPath: path).lastPathComponent
    return try parse(data, path: path, defaultSession: defaultSession)
  }

  /// Parses file contents, detecting the format from the first non-blank character and keys.
  public static func parse(_ data: Data, path: String, defaultSession: String) throws(ImportError)
    -> ConversationFile
  {
    guard String(data: data, encoding: .utf8) != nil else {
      throw .invalidUTF8(path: path, line: firstInvalidUTF8Line(data))
    }
    let firstByte = data.first { !($0 == 0x20 || $0 == 0x0A || $0 == 0x0D || $0 == 0x09) }
    guard let firstByte else { throw .empty(path: path) }
    if firstByte == UInt8(ascii: "{"), let whole = try? JSONValue.parse(data),
      let object = whole.objectValue, object["role"] == nil
    {
      guard object.keys.contains(where: { $0.hasPrefix("session_") }) else {
        throw .unknownFormat(path: path)
      }
      return try parseLoCoMo(object, path: path)
    }
    return try parseJSONL(data, path: path, defaultSession: defaultSession)
  }

  static func firstInvalidUTF8Line(_ data: Data) -> Int {
    var line = 1
    var start = data.startIndex
    for index in data.indices where data[index] == 0x0A {
      if String(data: data[start..<index], encoding: .utf8) == nil { return line }
      line += 1
      start = data.index(after: index)
    }
    return line
  }

  static func parseJSONL(_ data: Data, path: String, defaultSession: String) throws(ImportError)
    -> ConversationFile
  {
    var order: [String] = []
    var bySession: [String: [ConversationTurn]] = [:]
    var lineNumber = 0
    for rawLine in data.split(separator: 0x0A, omittingEmptySubsequences: false) {
      lineNumber += 1
      let line = rawLine.last == 0x0D ? rawLine.dropLast() : rawLine
      if line.allSatisfy({ $0 == 0x20 || $0 == 0x09 }) { continue }
      let value: JSONValue
      do {
        value = try JSONValue.parse(Data(line))
      } catch {
        throw .malformed(path: path, line: lineNumber, reason: "invalid JSON: \(error.reason)")
      }
      let turn = try turn(from: value, path: path, line: lineNumber)
      let session = turn.session ?? defaultSession
      if bySession[session] == nil { order.append(session) }
      bySession[session, default: []].append(turn)
    }
    guard !order.isEmpty else { throw .empty(path: path) }
    let sessions = order.map { name in
      let turns = bySession[name]!
      return ConversationSession(name: name, startedAt: turns.compactMap(\.timestamp).min(), turns: turns)
    }
    return ConversationFile(sessions: sessions, format: .jsonl)
  }

  static func turn(from value: JSONValue, path: String, line: Int) throws(ImportError) -> ConversationTurn {
    guard let object = value.objectValue else {
      throw .malformed(path: path, line: line, reason: "expected a JSON object")
    }
    guard let role = object["role"]?.stringValue else {
      throw .malformed(path: path, line: line, reason: "missing string field 'role'")
    }
    guard roles.contains(role) else {
      throw .malformed(
        path: path, line: line, reason: "role '\(role)' is not one of system, user, assistant, tool")
    }
    guard let content = object["content"]?.stringValue else {
      throw .malformed(path: path, line: line, reason: "missing string field 'content'")
    }
    guard !content.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty else {
      throw .malformed(path: path, line: line, reason: "empty 'content'")
    }
    var session: String?
    switch object["session"] {
    case nil, .null?: session = nil
    case .string(let name)?: session = name
    case .int(let number)?: session = String(number)
    default: throw .malformed(path: path, line: line, reason: "'session' must be a string")
    }
    var speaker: String?
    switch object["speaker"] {
    case nil, .null?: speaker = nil
    case .string(let name)?: speaker = name
    default: throw .malformed(path: path, line: line, reason: "'speaker' must be a string")
    }
    var timestamp: Date?
    switch object["timestamp"] {
    case nil, .null?: timestamp = nil
    case .string(let text)?:
      guard let date = DateParsing.iso8601(text) else {
        throw .malformed(path: path, line: line, reason: "'timestamp' is not an ISO 8601 date: \(text)")
      }
      timestamp = date
    case let number? where number.doubleValue != nil:
      let seconds = number.doubleValue!
      guard seconds.isFinite, abs(seconds) < 1e11 else {
        throw .malformed(path: path, line: line, reason: "'timestamp' is out of range")
      }
      timestamp = Date(timeIntervalSince1970: seconds)
    default:
      throw .malformed(path: path, line: line, reason: "'timestamp' must be an ISO 8601 string or a number")
    }
    var metadata: [String: JSONValue] = [:]
    switch object["metadata"] {
    case nil, .null?: break
    case .object(let members)?: metadata = members
    default: throw .malformed(path: path, line: line, reason: "'metadata' must be an object")
    }
    return ConversationTurn(
      role: role, content: content, session: session, speaker: speaker, timestamp: timestamp,
      metadata: metadata, sourceLine: line)
  }

  static func parseLoCoMo(_ object: [String: JSONValue], path: String) throws(ImportError) -> ConversationFile
  {
    let speakerA = object["speaker_a"]?.stringValue
    var sessions: [ConversationSession] = []
    var number = 1
    var turnIndex = 0
    while let value = object["session_\(number)"] {
      guard let turns = value.arrayValue else {
        throw .malformed(path: path, line: 0, reason: "session_\(number) must be a list of turns")
      }
      var startedAt: Date?
      if let dateText = object["session_\(number)_date_time"]?.stringValue {
        guard let date = DateParsing.locomo(dateText) else {
          throw .malformed(
            path: path, line: 0, reason: "session_\(number)_date_time is not a date: \(dateText)")
        }
        startedAt = date
      }
      var converted: [ConversationTurn] = []
      for (position, turn) in turns.enumerated() {
        turnIndex += 1
        guard let speaker = turn["speaker"]?.stringValue, let text = turn["text"]?.stringValue else {
          throw .malformed(
            path: path, line: 0,
            reason: "session_\(number) turn \(position + 1) needs string 'speaker' and 'text'")
        }
        var metadata: [String: JSONValue] = [:]
        for key in ["dia_id", "img_url", "blip_caption", "query"] {
          if let member = turn[key], member != .null { metadata[key] = member }
        }
        // Turns a minute apart keep their order and stay inside the session's day.
        let timestamp = startedAt.map { $0.addingTimeInterval(Double(position) * 60) }
        converted.append(
          ConversationTurn(
            role: speaker == speakerA ? "user" : "assistant", content: text, session: "session_\(number)",
            speaker: speaker, timestamp: timestamp, metadata: metadata, sourceLine: turnIndex))
      }
      sessions.append(ConversationSession(name: "session_\(number)", startedAt: startedAt, turns: converted))
      number += 1
    }
    guard !sessions.isEmpty, sessions.contains(where: { !$0.turns.isEmpty }) else { throw .empty(path: path) }
    return ConversationFile(sessions: sessions, format: .locomo)
  }
}

/// Date formats read by the importers and the CLI.
public enum DateParsing {
  /// Parses ISO 8601 with or without fractional seconds, or a plain `YYYY-MM-DD` (UTC).
  public static func iso8601(_ text: String) -> Date? {
    let formatter = ISO8601DateFormatter()
    formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
    if let date = formatter.date(from: text) { return date }
    formatter.formatOptions = [.withInternetDateTime]
    if let date = formatter.date(from: text) { return date }
    formatter.formatOptions = [.withFullDate]
    return formatter.date(from: text)
  }

  /// Parses LoCoMo's session dates, e.g. `1:56 pm on 8 May, 2023` (taken as UTC).
  public static func locomo(_ text: String) -> Date? {
    let formatter = DateFormatter()
    formatter.locale = Locale(identifier: "en_US_POSIX")
    formatter.timeZone = TimeZone(identifier: "UTC")
    for format in ["h:mm a 'on' d MMMM, yyyy", "h:mm a 'on' d MMM, yyyy", "h:mm a 'on' MMMM d, yyyy"] {
      formatter.dateFormat = format
      if let date = formatter.date(from: text) { return date }
    }
    return nil
  }
}
