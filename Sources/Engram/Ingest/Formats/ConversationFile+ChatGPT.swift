import Foundation

extension ConversationFile {
  /// Reads ChatGPT's data export: a list of conversations, each a tree of messages
  /// (`mapping`: node id → `{message, parent, children}`) whose shown branch ends at
  /// `current_node`. One session per conversation (`chatgpt/<id>`, titled by `title`); the
  /// branch is followed from `current_node` up to the root and read root first, so a
  /// regenerated answer or an edited question keeps only the version shown. System and tool
  /// messages, hidden ones, tool calls and messages without text are skipped; each turn's
  /// source id is its node id.
  static func parseChatGPT(_ bytes: UnsafeBufferPointer<UInt8>, path: String) throws(ImportError)
    -> ConversationFile
  {
    try parseConversationList(bytes, path: path, format: .chatgpt, session: chatGPTSession)
  }

  static func chatGPTSession(_ value: JSONValue, number: Int, line: Int, path: String) throws(ImportError)
    -> ConversationSession?
  {
    func failure(_ reason: String) -> ImportError {
      .malformed(path: path, line: line, reason: "conversation \(number): \(reason)")
    }
    guard let conversation = value.objectValue else { throw failure("expected an object") }
    guard let mapping = conversation["mapping"]?.objectValue else {
      throw failure("no 'mapping' object of messages")
    }
    let id = conversation["conversation_id"]?.stringValue ?? conversation["id"]?.stringValue
    let title = conversation["title"]?.stringValue
    let name = "chatgpt/" + (id ?? title ?? "conversation-\(number)")
    let created = try epochSeconds(
      conversation["create_time"], failure("'create_time' is not a time in seconds"))

    // References to nodes the mapping does not hold (an export cut by ChatGPT itself: a
    // child, a parent or the current node that is not there) are skipped, each with a note.
    var warnings: [IngestWarning] = []
    func dangling(_ node: String?, _ reference: String, _ relation: IngestWarning.Relation) {
      warnings.append(
        .danglingNode(
          path: path, conversation: number, session: name, node: node, reference: reference,
          relation: relation))
    }
    for key in mapping.keys.sorted() {
      for child in mapping[key]?["children"]?.arrayValue ?? [] {
        if let child = child.stringValue, mapping[child]?.objectValue == nil { dangling(key, child, .child) }
      }
    }

    // The branch shown, from its last node up to the root.
    var nodeID: String?
    switch conversation["current_node"] {
    case .string(let current)?:
      if mapping[current]?.objectValue != nil {
        nodeID = current
      } else {
        dangling(nil, current, .currentNode)
        nodeID = latestLeaf(mapping)
      }
    case nil, .null?: nodeID = latestLeaf(mapping)
    default: throw failure("'current_node' must be a node id")
    }
    var branch: [(id: String, node: [String: JSONValue])] = []
    var seen: Set<String> = []
    while let current = nodeID {
      guard seen.insert(current).inserted else { throw failure("the parents of node \(current) form a loop") }
      guard let node = mapping[current]?.objectValue else {
        throw failure("node \(current) is not an object")
      }
      branch.append((current, node))
      nodeID = node["parent"]?.stringValue
      if let parent = nodeID, mapping[parent]?.objectValue == nil {
        // The node is the first the mapping holds of its branch: the branch starts there.
        dangling(current, parent, .parent)
        nodeID = nil
      }
    }

    var turns: [ConversationTurn] = []
    for (nodeKey, node) in branch.reversed() {
      guard let message = node["message"]?.objectValue else { continue }
      guard let role = message["author"]?["role"]?.stringValue else {
        throw failure("message \(nodeKey) has no 'author.role'")
      }
      guard role == "user" || role == "assistant" else { continue }
      if message["metadata"]?["is_visually_hidden_from_conversation"]?.boolValue == true { continue }
      // A message addressed to a tool (code, browsing) is a call, not conversation.
      if let recipient = message["recipient"]?.stringValue, recipient != "all" { continue }
      let content = message["content"]
      let contentType = content?["content_type"]?.stringValue ?? "text"
      guard contentType == "text" || contentType == "multimodal_text" else { continue }
      // Parts are strings, or objects for images and files (kept out: they are not text).
      let text = (content?["parts"]?.arrayValue ?? []).compactMap(\.stringValue).filter { !isBlank($0) }
        .joined(separator: "\n")
      guard !isBlank(text) else { continue }
      let time = try epochSeconds(
        message["create_time"], failure("message \(nodeKey): 'create_time' is not a time in seconds"))
      var metadata: [String: JSONValue] = [:]
      if let model = message["metadata"]?["model_slug"]?.stringValue { metadata["model"] = .string(model) }
      turns.append(
        ConversationTurn(
          role: role, content: text, session: name, timestamp: time, metadata: metadata, sourceLine: line,
          sourceID: nodeKey))
    }
    guard !turns.isEmpty || !warnings.isEmpty else { return nil }
    return ConversationSession(
      name: name, title: title, startedAt: created ?? turns.compactMap(\.timestamp).min(), turns: turns,
      warnings: warnings)
  }

  /// The leaf with the latest message, for a conversation that names no `current_node` (or
  /// one the mapping does not hold). A leaf is a node none of whose children the mapping
  /// holds, so a dangling child does not hide the branch that names it.
  static func latestLeaf(_ mapping: [String: JSONValue]) -> String? {
    let leaves = mapping.filter { entry in
      (entry.value["children"]?.arrayValue ?? []).allSatisfy { child in
        child.stringValue.map { mapping[$0]?.objectValue == nil } ?? true
      }
    }
    return leaves.max { first, second in
      let a = first.value["message"]?["create_time"]?.doubleValue ?? 0
      let b = second.value["message"]?["create_time"]?.doubleValue ?? 0
      return a == b ? first.key > second.key : a < b
    }?.key
  }
}
