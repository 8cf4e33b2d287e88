import Foundation

extension ConversationFile {
  /// Reads Claude's data export: a list of conversations `{uuid, name, created_at,
  /// chat_messages}`, each message `{uuid, sender, text, created_at, content?}`. One session
  /// per conversation (`claude/<uuid>`, titled by `name`); `human` is the user, `assistant`
  /// the assistant; a message's text is `text`, or its `content` blocks of type `text` when
  /// `text` is empty; messages without text are skipped; each turn's source id is its uuid.
  static func parseClaude(_ bytes: UnsafeBufferPointer<UInt8>, path: String) throws(ImportError)
    -> ConversationFile
  {
    try parseConversationList(bytes, path: path, format: .claude, session: claudeSession)
  }

  static func claudeSession(_ value: JSONValue, number: Int, line: Int, path: String) throws(ImportError)
    -> ConversationSession?
  {
    func failure(_ reason: String) -> ImportError {
      .malformed(path: path, line: line, reason: "conversation \(number): \(reason)")
    }
    guard let conversation = value.objectValue else { throw failure("expected an object") }
    guard let messages = conversation["chat_messages"]?.arrayValue else {
      throw failure("no 'chat_messages' list")
    }
    let id = conversation["uuid"]?.stringValue
    let title = conversation["name"]?.stringValue.flatMap { isBlank($0) ? nil : $0 }
    let name = "claude/" + (id ?? title ?? "conversation-\(number)")
    let created = try isoTime(conversation["created_at"], failure("'created_at' is not an ISO 8601 time"))
    var turns: [ConversationTurn] = []
    for (index, element) in messages.enumerated() {
      guard let message = element.objectValue else {
        throw failure("message \(index + 1): expected an object")
      }
      let role: String
      switch message["sender"]?.stringValue {
      case "human"?, "user"?: role = "user"
      case "assistant"?: role = "assistant"
      case nil: throw failure("message \(index + 1): no 'sender'")
      default: continue
      }
      var text = message["text"]?.stringValue ?? ""
      if isBlank(text) {
        text = (message["content"]?.arrayValue ?? []).compactMap { block in
          block["type"]?.stringValue == "text" ? block["text"]?.stringValue : nil
        }.filter { !isBlank($0) }.joined(separator: "\n\n")
      }
      guard !isBlank(text) else { continue }
      let time = try isoTime(
        message["created_at"], failure("message \(index + 1): 'created_at' is not an ISO 8601 time"))
      turns.append(
        ConversationTurn(
          role: role, content: text, session: name, timestamp: time, sourceLine: line,
          sourceID: message["uuid"]?.stringValue))
    }
    guard !turns.isEmpty else { return nil }
    return ConversationSession(
      name: name, title: title, startedAt: created ?? turns.compactMap(\.timestamp).min(), turns: turns)
  }
}
