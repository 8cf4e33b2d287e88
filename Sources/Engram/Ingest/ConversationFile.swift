import Foundation

/// A conversation file parsed into sessions of turns, ready to be stored.
///
/// The formats read (see `docs/ingest.md` for each one's mapping):
/// - JSONL per `schemas/conversation-import.schema.json`: one OpenAI-style message per line,
///   `{"role", "content", "session"?, "speaker"?, "timestamp"?, "metadata"?}`. Blank lines
///   are skipped. Turns without a `session` go to one session named after the file.
/// - LoCoMo JSON: `speaker_a`, `speaker_b`, `session_N` lists of `{speaker, dia_id, text}`
///   and `session_N_date_time` (e.g. `1:56 pm on 8 May, 2023`).
/// - ChatGPT's and Claude's data exports (`conversations.json`), WhatsApp's "Export chat"
///   text and Telegram Desktop's JSON export (`result.json`).
///
/// Markdown notes are not conversations: `NoteFile` reads them.
///
/// Parsing is all-or-nothing: the first malformed line or record refuses the whole file,
/// with its line number, and nothing is stored.
public struct ConversationFile: Sendable, Equatable {
  /// The sessions, in file order.
  public var sessions: [ConversationSession]
  /// The format the file was read as.
  public var format: Format

  /// The formats `ingest` reads.
  public enum Format: String, Sendable, CaseIterable {
    /// ChatGPT's data export, `conversations.json`.
    case chatgpt
    /// Claude's data export, `conversations.json`.
    case claude
    /// WhatsApp's "Export chat" text file.
    case whatsapp
    /// Telegram Desktop's JSON export, `result.json` (one chat or all chats).
    case telegram
    /// Markdown notes (a file or a folder of them), stored as memories.
    case markdown
    /// One JSON message per line (`schemas/conversation-import.schema.json`).
    case jsonl
    /// The LoCoMo benchmark's conversation JSON.
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
  public static func read(path: String, options: IngestOptions = IngestOptions()) throws(ImportError)
    -> ConversationFile
  {
    // Standard input, FIFOs and pipes are read to their end like files; a folder is refused.
    let data = try InputFile.readAll(path)
    return try parse(data, path: path, defaultSession: defaultSession(path), options: options)
  }

  /// The session name of a file's turns that name none: the file's name.
  static func defaultSession(_ path: String) -> String {
    path == "-" ? "stdin" : URL(fileURLWithPath: path).lastPathComponent
  }

  /// Parses file contents in `options.format`, or the format detected from the content.
  ///
  /// - Throws: `ImportError`: `.malformed` with the line (and the record in the reason),
  ///   `.invalidUTF8`, `.empty`, `.unknownFormat` (also for Markdown, which holds notes).
  public static func parse(
    _ data: Data, path: String, defaultSession: String, options: IngestOptions = IngestOptions()
  ) throws(ImportError) -> ConversationFile {
    let result: Result<ConversationFile, ImportError> = data.withUnsafeBytes { raw in
      let bytes = raw.bindMemory(to: UInt8.self)
      do throws(ImportError) {
        try checkUTF8(bytes, path: path)
        var format = options.format
        if format == nil { format = try detect(bytes, path: path) }
        switch format ?? .jsonl {
        case .jsonl: return .success(try parseJSONL(data, path: path, defaultSession: defaultSession))
        case .locomo: return .success(try parseLoCoMo(bytes, path: path))
        case .chatgpt: return .success(try parseChatGPT(bytes, path: path))
        case .claude: return .success(try parseClaude(bytes, path: path))
        case .telegram: return .success(try parseTelegram(bytes, path: path))
        case .whatsapp:
          return .success(
            try parseWhatsApp(bytes, path: path, defaultSession: defaultSession, dateOrder: options.dateOrder)
          )
        case .markdown: return .failure(.unknownFormat(path: path))
        }
      } catch {
        return .failure(error)
      }
    }
    return try result.get()
  }

  /// The format of file contents, detected as `parse` does.
  /// - Throws: `ImportError`: `.invalidUTF8`, `.empty`, `.unknownFormat`.
  public static func format(of data: Data, path: String) throws(ImportError) -> Format {
    let result: Result<Format, ImportError> = data.withUnsafeBytes { raw in
      let bytes = raw.bindMemory(to: UInt8.self)
      do throws(ImportError) {
        try checkUTF8(bytes, path: path)
        return .success(try detect(bytes, path: path))
      } catch {
        return .failure(error)
      }
    }
    return try result.get()
  }

  /// Refuses bytes that are not UTF-8, naming the first bad line.
  static func checkUTF8(_ bytes: UnsafeBufferPointer<UInt8>, path: String) throws(ImportError) {
    var iterator = bytes.makeIterator()
    var decoder = UTF8()
    while true {
      switch decoder.decode(&iterator) {
      case .scalarValue: continue
      case .emptyInput: return
      case .error: throw .invalidUTF8(path: path, line: firstInvalidUTF8Line(Data(bytes)))
      }
    }
  }

  /// The format of a file, from its content (and, for Markdown, its name).
  ///
  /// A JSON array of objects with `mapping` is ChatGPT's, with `chat_messages` Claude's; a
  /// JSON object with `messages` or `chats` is Telegram's, with `session_N` keys LoCoMo's;
  /// text whose first line starts like a WhatsApp message is WhatsApp's; front matter, a
  /// heading or a `.md` name is Markdown; everything else is read as JSONL.
  /// - Throws: `.empty` for a file with nothing in it, `.unknownFormat` for JSON of another kind.
  static func detect(_ bytes: UnsafeBufferPointer<UInt8>, path: String) throws(ImportError) -> Format {
    var scanner = JSONScanner(bytes)
    var start = 0
    if bytes.count >= 3, bytes[0] == 0xEF, bytes[1] == 0xBB, bytes[2] == 0xBF { start = 3 }
    start = scanner.skipWhitespace(start)
    guard start < bytes.count else { throw .empty(path: path) }
    let lineEnd = bytes[start...].firstIndex(of: 0x0A) ?? bytes.count
    let firstLine = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<lineEnd]), as: UTF8.self)
    // WhatsApp's bracketed lines start with '[' too.
    if WhatsAppLine(firstLine) != nil { return .whatsapp }
    guard bytes[start] == UInt8(ascii: "[") || bytes[start] == UInt8(ascii: "{") else {
      return NoteFile.looksLikeMarkdown(firstLine: firstLine, path: path) ? .markdown : .jsonl
    }
    let document: Range<Int>
    do {
      document = try scanner.document()
    } catch {
      // Several values, one per line, are JSONL; a first line that is no whole value is a
      // document cut short or damaged.
      if (try? JSONValue.parse(firstLine)) != nil { return .jsonl }
      throw malformed(error, scanner: &scanner, path: path)
    }
    if bytes[start] == UInt8(ascii: "[") {
      guard let elements = try? scanner.elements(of: document) else { return .jsonl }
      guard let first = elements.first else { throw .empty(path: path) }
      guard bytes[first.lowerBound] == UInt8(ascii: "{"),
        let keys = try? scanner.members(of: first).map(\.key)
      else { return .jsonl }
      if keys.contains("mapping") { return .chatgpt }
      if keys.contains("chat_messages") { return .claude }
      throw .unknownFormat(path: path)
    }
    guard let keys = try? scanner.members(of: document).map(\.key) else { return .jsonl }
    if keys.contains("role") { return .jsonl }
    if keys.contains("messages") || keys.contains("chats") { return .telegram }
    if keys.contains(where: { $0.hasPrefix("session_") }) { return .locomo }
    throw .unknownFormat(path: path)
  }

  /// The line of the byte at `offset`.
  static func malformed(
    _ failure: JSONScanner.Failure, scanner: inout JSONScanner, path: String, record: String? = nil
  ) -> ImportError {
    let reason = record.map { "\($0): \(failure.reason)" } ?? failure.reason
    return .malformed(path: path, line: scanner.line(at: failure.offset), reason: reason)
  }

  /// Why a line or record is not read as JSON: nested too deep (valid, but past the limit),
  /// or invalid.
  static func jsonReason(_ error: JSONValue.ParseError, in unit: String = "line") -> String {
    if let offset = error.tooDeepAt {
      return
        "the JSON nests arrays and objects more than \(JSONValue.maxNesting) levels deep "
        + "(past the limit at byte \(offset + 1) of the \(unit)); it is not read"
    }
    return "invalid JSON: \(error.reason)"
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
        throw .malformed(path: path, line: lineNumber, reason: jsonReason(error))
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
      guard let date = DateParser.fileTimestamp(text) else {
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

  static func parseLoCoMo(_ bytes: UnsafeBufferPointer<UInt8>, path: String) throws(ImportError)
    -> ConversationFile
  {
    let parsed: JSONValue
    do {
      parsed = try JSONValue.parse(Data(bytes))
    } catch {
      throw .malformed(path: path, line: 0, reason: jsonReason(error, in: "file"))
    }
    guard let object = parsed.objectValue else {
      throw .malformed(path: path, line: 1, reason: "expected a JSON object")
    }
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
        guard let date = DateParser.spelledOut(dateText) else {
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
