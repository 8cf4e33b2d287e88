import Foundation

extension ConversationFile {
  /// Reads Telegram Desktop's JSON export: one chat `{name, type, id, messages}` or all chats
  /// `{chats: {list: [chat, ...]}}`. One session per chat (`telegram/<id>`, titled by
  /// `name`); every message of type `message` with text is a turn of role `user` whose
  /// speaker is `from` (a chat is a log of many people); `text` is a string or a list of
  /// strings and entities `{type, text}`, joined; the time is `date_unixtime`, else `date`
  /// (zone-less, read as UTC); the source id is the message `id`. Service messages and
  /// messages without text (stickers, photos) are skipped.
  ///
  /// Messages are parsed one at a time: the export is never held as one tree of values.
  static func parseTelegram(_ bytes: UnsafeBufferPointer<UInt8>, path: String) throws(ImportError)
    -> ConversationFile
  {
    var scanner = JSONScanner(bytes)
    var sessions: [ConversationSession] = []
    var record = ""
    do throws(JSONScanner.Failure) {
      let document = try scanner.document()
      let members = try scanner.members(of: document)
      var chats = [document]
      var isList = false
      if let list = members.first(where: { $0.key == "chats" })?.value {
        guard let inner = try scanner.members(of: list).first(where: { $0.key == "list" })?.value else {
          throw JSONScanner.Failure(offset: list.lowerBound, reason: "'chats' has no 'list' of chats")
        }
        chats = try scanner.elements(of: inner)
        isList = true
      }
      for (chatIndex, chatRange) in chats.enumerated() {
        if let session = try telegramChat(
          &scanner, chatRange, label: isList ? "chat \(chatIndex + 1)" : "", number: chatIndex + 1,
          record: &record)
        {
          sessions.append(session)
        }
      }
    } catch {
      throw malformed(error, scanner: &scanner, path: path, record: record.isEmpty ? nil : record)
    }
    guard !sessions.isEmpty else { throw .empty(path: path) }
    return ConversationFile(sessions: sessions, format: .telegram)
  }

  /// The session of one chat (`chatRange` in the scanner's bytes), nil for a chat without
  /// text messages; `record` names the chat and message being read, for errors; the chat's
  /// bytes start on `firstLine` of the file.
  static func telegramChat(
    _ scanner: inout JSONScanner, _ chatRange: Range<Int>, label chatLabel: String, number: Int,
    record: inout String, firstLine: Int = 1
  ) throws(JSONScanner.Failure) -> ConversationSession? {
    let isList = !chatLabel.isEmpty
    record = chatLabel
    let chat = try scanner.members(of: chatRange)
    func field(_ key: String) throws(JSONScanner.Failure) -> JSONValue? {
      guard let range = chat.first(where: { $0.key == key })?.value else { return nil }
      return try scanner.value(range)
    }
    guard let messages = chat.first(where: { $0.key == "messages" })?.value else {
      throw JSONScanner.Failure(offset: chatRange.lowerBound, reason: "no 'messages' list")
    }
    let title = try field("name")?.stringValue
    let id: String? =
      switch try field("id") {
      case .int(let number)?: String(number)
      case .string(let text)?: text
      default: nil
      }
    let name = "telegram/" + (id ?? title ?? "chat-\(number)")
    var turns: [ConversationTurn] = []
    for (index, range) in try scanner.elements(of: messages).enumerated() {
      record = (isList ? chatLabel + ", " : "") + "message \(index + 1)"
      let line = scanner.line(at: range.lowerBound) + firstLine - 1
      if let turn = try telegramTurn(
        try scanner.value(range), session: name, line: line, offset: range.lowerBound)
      {
        turns.append(turn)
      }
    }
    guard !turns.isEmpty else { return nil }
    return ConversationSession(
      name: name, title: title, startedAt: turns.compactMap(\.timestamp).min(), turns: turns)
  }

  /// The turn of one message, or nil for a message that is not one.
  /// - Throws: a failure at `offset`, the message's start.
  static func telegramTurn(_ value: JSONValue, session: String, line: Int, offset: Int)
    throws(JSONScanner.Failure) -> ConversationTurn?
  {
    func failure(_ reason: String) -> JSONScanner.Failure {
      JSONScanner.Failure(offset: offset, reason: reason)
    }
    guard let message = value.objectValue else { throw failure("expected an object") }
    guard message["type"]?.stringValue == "message" else { return nil }
    var text: String
    switch message["text"] {
    case nil, .null?: text = ""
    case .string(let plain)?: text = plain
    case .array(let pieces)?:
      text = ""
      for piece in pieces {
        switch piece {
        case .string(let plain): text += plain
        case .object(let entity): text += entity["text"]?.stringValue ?? ""
        default: throw failure("every part of 'text' must be a string or an entity {type, text}")
        }
      }
    default: throw failure("'text' must be a string or a list")
    }
    guard !isBlank(text) else { return nil }
    var time = try epochSeconds(message["date_unixtime"], failure("'date_unixtime' is not a time in seconds"))
    if time == nil {
      time = try isoTime(message["date"], failure("'date' is not an ISO 8601 time"))
    }
    let id: String? =
      switch message["id"] {
      case .int(let number)?: String(number)
      case .string(let text)?: text
      default: nil
      }
    var metadata: [String: JSONValue] = [:]
    if let reply = message["reply_to_message_id"], reply != .null { metadata["reply_to"] = reply }
    if let edited = message["edited"], edited != .null { metadata["edited"] = edited }
    return ConversationTurn(
      role: "user", content: text, session: session,
      speaker: message["from"]?.stringValue ?? message["from_id"]?.stringValue, timestamp: time,
      metadata: metadata, sourceLine: line, sourceID: id)
  }
}
