import Foundation

/// A conversation file read one conversation at a time, so ingesting an export holds one
/// conversation in memory, not the file.
///
/// JSONL is read a line at a time and handed out in runs of consecutive turns of one
/// session (at most `jsonlRun`; a session's turns may come in several runs, which the
/// ingest joins by name); ChatGPT's and Claude's exports one conversation of their list at a
/// time; Telegram's export of all chats one chat at a time. A WhatsApp chat, a Telegram
/// export of one chat and LoCoMo's file are one conversation each, standard input and pipes
/// cannot be read twice: these are parsed whole (`ConversationFile.parse`).
///
/// The sessions and turns are those `ConversationFile.parse` gives, in the same order
/// (`ConversationStreamTests`), and errors name the same lines. A stream is used by one task
/// at a time (its calls may run on different threads, one after another).
final class ConversationStream: @unchecked Sendable {
  static let jsonlRun = 2_000

  let path: String
  let format: ConversationFile.Format
  /// Whether the sessions are read from the file (not handed over already parsed).
  let isFromFile: Bool
  /// How the file was opened, to open it again (`again()`).
  private let options: IngestOptions
  private let blockBytes: Int
  private var state: State
  /// The sessions, when the file was parsed whole: reading it again reuses them.
  private var parsed: [ConversationSession]?

  private enum State {
    case whole(ArraySlice<ConversationSession>)
    case jsonl(ExportLineReader, defaultSession: String, pending: ConversationTurn?)
    /// Inside the top-level list of ChatGPT's or Claude's export; `number` records read.
    case records(JSONStream, number: Int, first: Bool)
    /// Inside Telegram's `chats.list`.
    case chats(JSONStream, number: Int, first: Bool)
    case finished
  }

  /// The sessions of a file parsed whole, as a stream.
  init(_ file: ConversationFile, path: String) {
    self.path = path
    format = file.format
    isFromFile = false
    options = IngestOptions()
    blockBytes = JSONStream.defaultBlockBytes
    state = .whole(file.sessions[...])
    parsed = file.sessions
  }

  private init(sessions: [ConversationSession], like other: ConversationStream) {
    path = other.path
    format = other.format
    isFromFile = other.isFromFile
    options = other.options
    blockBytes = other.blockBytes
    state = .whole(sessions[...])
    parsed = sessions
  }

  /// The same file from its start: parsed sessions are reused, a streamed file is opened
  /// again (in the format found the first time).
  func again() throws(ImportError) -> ConversationStream {
    if let parsed { return ConversationStream(sessions: parsed, like: self) }
    var options = self.options
    options.format = format
    return try ConversationStream(path: path, options: options, blockBytes: blockBytes)
  }

  /// Opens `path` in `options.format`, or the format detected from its content.
  /// - Throws: `ImportError` as `ConversationFile.parse` (`.empty` for a file without
  ///   turns is thrown by the reader of the whole file, or found by the caller).
  /// `blockBytes`: how much of the file is read at a time (tests read small blocks).
  init(path: String, options: IngestOptions, blockBytes: Int = JSONStream.defaultBlockBytes)
    throws(ImportError)
  {
    self.path = path
    isFromFile = true
    self.options = options
    self.blockBytes = blockBytes
    let defaultSession = ConversationFile.defaultSession(path)
    let regular = InputFile.isRegularFile(path)
    var format = options.format
    if format == nil, regular { format = try Self.detect(path: path) }
    switch format {
    case .jsonl? where regular:
      do {
        state = .jsonl(try ExportLineReader(path: path), defaultSession: defaultSession, pending: nil)
      } catch let error as ImportError {
        throw error
      } catch {
        throw .unreadable(path: path, reason: "\(error)")
      }
    case .chatgpt? where regular, .claude? where regular:
      let stream = try JSONStream(path: path, blockBytes: blockBytes)
      try stream.expect(UInt8(ascii: "["), "a list of conversations")
      state = .records(stream, number: 0, first: true)
    case .telegram? where regular:
      let stream = try JSONStream(path: path, blockBytes: blockBytes)
      state = try Self.openChats(stream) ?? .finished
      if case .finished = state {
        // One chat: one conversation, read whole.
        let sessions = try Self.whole(path, format: .telegram, options: options)
        state = .whole(sessions[...])
        parsed = sessions
      }
    default:
      var options = options
      options.format = format
      let file = try ConversationFile.parse(
        InputFile.readAll(path), path: path, defaultSession: defaultSession, options: options)
      format = file.format
      state = .whole(file.sessions[...])
      parsed = file.sessions
    }
    self.format = format ?? .jsonl
  }

  private static func whole(_ path: String, format: ConversationFile.Format, options: IngestOptions)
    throws(ImportError) -> [ConversationSession]
  {
    var options = options
    options.format = format
    return try ConversationFile.parse(
      InputFile.readAll(path), path: path, defaultSession: ConversationFile.defaultSession(path),
      options: options
    ).sessions
  }

  /// The format of a regular file, from its first bytes (at most the first value of a list,
  /// or the first line).
  static func detect(path: String) throws(ImportError) -> ConversationFile.Format {
    let prefix = try JSONStream(path: path)
    guard let first = try prefix.skipWhitespace() else { throw .empty(path: path) }
    if first == UInt8(ascii: "[") || first == UInt8(ascii: "{") {
      // The first value's members (a list's first element's) are enough, read one at a time.
      if first == UInt8(ascii: "[") {
        try prefix.expect(UInt8(ascii: "["), "a list")
        if try prefix.skipWhitespace() == UInt8(ascii: "{"), let keys = try? Self.keys(prefix) {
          if keys.contains("mapping") { return .chatgpt }
          if keys.contains("chat_messages") { return .claude }
        }
      } else if let keys = try? Self.keys(prefix) {
        // Several values, one per line, are JSONL.
        if keys.contains("role") || (try? prefix.skipWhitespace()) != nil { return .jsonl }
        if keys.contains("chats") || keys.contains("messages") { return .telegram }
      }
    }
    // Everything else (WhatsApp, LoCoMo, Markdown, damage) as the whole-file reader decides.
    return try ConversationFile.format(of: InputFile.readAll(path), path: path)
  }

  /// The member names of the object at the stream's position, skipping their values.
  private static func keys(_ stream: JSONStream) throws(ImportError) -> Set<String> {
    try stream.expect(UInt8(ascii: "{"), "an object")
    var keys: Set<String> = []
    if try stream.skipWhitespace() == UInt8(ascii: "}") { return keys }
    repeat {
      keys.insert(try stream.readKey())
      try stream.expect(UInt8(ascii: ":"), "':'")
      try stream.skipValue()
    } while try stream.separator(closing: UInt8(ascii: "}"))
    return keys
  }

  /// Moves into Telegram's `chats.list`; nil when the export has no `chats` (one chat).
  private static func openChats(_ stream: JSONStream) throws(ImportError) -> State? {
    try stream.expect(UInt8(ascii: "{"), "an object")
    if try stream.skipWhitespace() == UInt8(ascii: "}") { return nil }
    repeat {
      let key = try stream.readKey()
      try stream.expect(UInt8(ascii: ":"), "':'")
      if key == "chats" {
        let line = stream.line
        try stream.expect(UInt8(ascii: "{"), "'chats' object")
        if try stream.skipWhitespace() != UInt8(ascii: "}") {
          repeat {
            let inner = try stream.readKey()
            try stream.expect(UInt8(ascii: ":"), "':'")
            if inner == "list" {
              try stream.expect(UInt8(ascii: "["), "a list of chats")
              return .chats(stream, number: 0, first: true)
            }
            try stream.skipValue()
          } while try stream.separator(closing: UInt8(ascii: "}"))
        }
        throw stream.failure("'chats' has no 'list' of chats", line: line)
      }
      try stream.skipValue()
    } while try stream.separator(closing: UInt8(ascii: "}"))
    return nil
  }

  /// The next session (or run of one session's turns), nil at the end.
  /// - Throws: `ImportError` naming the line.
  func next() throws(ImportError) -> ConversationSession? {
    while true {
      switch state {
      case .finished:
        return nil
      case .whole(var sessions):
        guard let session = sessions.popFirst() else {
          state = .finished
          return nil
        }
        state = .whole(sessions)
        return session
      case .jsonl(let reader, let defaultSession, let pending):
        return try nextRun(reader, defaultSession: defaultSession, pending: pending)
      case .records(let stream, let number, let first):
        let more =
          first ? try stream.skipWhitespace() != UInt8(ascii: "]") : try stream.separator(closing: 0x5D)
        guard more else {
          if first { try stream.expect(UInt8(ascii: "]"), "']'") }
          try stream.expectEnd()
          state = .finished
          return nil
        }
        let (value, line) = try stream.readValue()
        state = .records(stream, number: number + 1, first: false)
        let session =
          format == .chatgpt
          ? try ConversationFile.chatGPTSession(value, number: number + 1, line: line, path: path)
          : try ConversationFile.claudeSession(value, number: number + 1, line: line, path: path)
        if let session { return session }
      case .chats(let stream, let number, let first):
        let more =
          first ? try stream.skipWhitespace() != UInt8(ascii: "]") : try stream.separator(closing: 0x5D)
        guard more else {
          if first { try stream.expect(UInt8(ascii: "]"), "']'") }
          try closeChats(stream)
          state = .finished
          return nil
        }
        state = .chats(stream, number: number + 1, first: false)
        if let session = try chat(stream, number: number + 1) { return session }
      }
    }
  }

  /// After `chats.list`: the rest of `chats` and of the document, skipped but checked.
  private func closeChats(_ stream: JSONStream) throws(ImportError) {
    for _ in 0..<2 {
      while try stream.separator(closing: UInt8(ascii: "}")) {
        _ = try stream.readKey()
        try stream.expect(UInt8(ascii: ":"), "':'")
        try stream.skipValue()
      }
    }
    try stream.expectEnd()
  }

  /// One chat of Telegram's list, read whole and parsed as `parseTelegram` does.
  private func chat(_ stream: JSONStream, number: Int) throws(ImportError) -> ConversationSession? {
    let (bytes, line) = try stream.readRawValue()
    return try bytes.withUnsafeBufferPointer { bytes throws(ImportError) in
      var scanner = JSONScanner(bytes)
      var record = ""
      do throws(JSONScanner.Failure) {
        return try ConversationFile.telegramChat(
          &scanner, 0..<bytes.count, label: "chat \(number)", number: number, record: &record,
          firstLine: line)
      } catch {
        let reason = record.isEmpty ? error.reason : "\(record): \(error.reason)"
        throw .malformed(path: path, line: line + scanner.line(at: error.offset) - 1, reason: reason)
      }
    }
  }

  /// The next run of JSONL turns of one session.
  private func nextRun(_ reader: ExportLineReader, defaultSession: String, pending: ConversationTurn?)
    throws(ImportError) -> ConversationSession?
  {
    var turns: [ConversationTurn] = pending.map { [$0] } ?? []
    var session = pending.map { $0.session ?? defaultSession }
    var carried: ConversationTurn?
    let path = self.path
    do {
      while turns.count < Self.jsonlRun, carried == nil {
        var parsed: ConversationTurn?
        let more = try reader.nextLine(path: path) { raw in
          var line = raw[...]
          if line.last == 0x0A { line = line.dropLast() }
          if line.last == 0x0D { line = line.dropLast() }
          if line.allSatisfy({ $0 == 0x20 || $0 == 0x09 }) { return }
          guard String(validating: line, as: UTF8.self) != nil else {
            throw ImportError.invalidUTF8(path: path, line: reader.lineNumber)
          }
          let value: JSONValue
          do throws(JSONValue.ParseError) {
            value = try JSONValue.parse(Data(line))
          } catch {
            throw ImportError.malformed(
              path: path, line: reader.lineNumber, reason: ConversationFile.jsonReason(error))
          }
          parsed = try ConversationFile.turn(from: value, path: path, line: reader.lineNumber)
        }
        guard more else { break }
        guard let turn = parsed else { continue }
        let name = turn.session ?? defaultSession
        if session == nil { session = name }
        if name == session { turns.append(turn) } else { carried = turn }
      }
    } catch let error as ImportError {
      throw error
    } catch is EngramError {
      // The line reader's one error of its own: a line past its length limit.
      throw .malformed(
        path: path, line: reader.lineNumber + 1,
        reason: "the line is longer than \(ExportLineReader.maximumLineLength >> 20) MiB")
    } catch {
      throw .unreadable(path: path, reason: "\(error)")
    }
    guard let session, !turns.isEmpty else {
      state = .finished
      return nil
    }
    state =
      carried == nil && turns.count < Self.jsonlRun
      ? .finished : .jsonl(reader, defaultSession: defaultSession, pending: carried)
    return ConversationSession(name: session, startedAt: turns.compactMap(\.timestamp).min(), turns: turns)
  }
}
