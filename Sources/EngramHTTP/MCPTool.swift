import EngramCore

/// Hints a client may show about what a tool does; none of them is a guarantee.
public struct ToolAnnotations: Sendable, Hashable {
  /// The tool only reads.
  public var readOnlyHint: Bool?
  /// The tool may delete or overwrite (meaningful when not read-only).
  public var destructiveHint: Bool?
  /// Calling twice with the same arguments has no further effect.
  public var idempotentHint: Bool?
  /// The tool reaches outside the local memory (network, other systems).
  public var openWorldHint: Bool?

  /// Creates annotations; `nil` leaves a hint out.
  public init(
    readOnlyHint: Bool? = nil, destructiveHint: Bool? = nil, idempotentHint: Bool? = nil,
    openWorldHint: Bool? = nil
  ) {
    self.readOnlyHint = readOnlyHint
    self.destructiveHint = destructiveHint
    self.idempotentHint = idempotentHint
    self.openWorldHint = openWorldHint
  }

  /// The hints as a JSON object (only those set).
  public var json: JSONValue {
    var members: [String: JSONValue] = [:]
    if let readOnlyHint { members["readOnlyHint"] = .bool(readOnlyHint) }
    if let destructiveHint { members["destructiveHint"] = .bool(destructiveHint) }
    if let idempotentHint { members["idempotentHint"] = .bool(idempotentHint) }
    if let openWorldHint { members["openWorldHint"] = .bool(openWorldHint) }
    return .object(members)
  }
}

/// A tool the server offers: its name, description and JSON Schemas, as listed by `tools/list`.
public struct MCPTool: Sendable, Hashable {
  /// The unique name clients call (`memory_search`).
  public var name: String
  /// A short human title.
  public var title: String?
  /// What the tool does and when to use it; the model reads this.
  public var description: String
  /// A JSON Schema object for the arguments; `tools/call` arguments are checked against it.
  public var inputSchema: JSONValue
  /// A JSON Schema object for `structuredContent`, if the tool returns structured results.
  public var outputSchema: JSONValue?
  /// Behaviour hints.
  public var annotations: ToolAnnotations?

  /// Creates a tool description.
  public init(
    name: String, title: String? = nil, description: String,
    inputSchema: JSONValue = ["type": "object", "properties": [:]], outputSchema: JSONValue? = nil,
    annotations: ToolAnnotations? = nil
  ) {
    self.name = name
    self.title = title
    self.description = description
    self.inputSchema = inputSchema
    self.outputSchema = outputSchema
    self.annotations = annotations
  }

  /// The tool as a `tools/list` entry.
  public var json: JSONValue {
    var members: [String: JSONValue] = [
      "name": .string(name), "description": .string(description), "inputSchema": inputSchema,
    ]
    if let title { members["title"] = .string(title) }
    if let outputSchema { members["outputSchema"] = outputSchema }
    if let annotations { members["annotations"] = annotations.json }
    return .object(members)
  }
}

/// One block of a tool result's content.
public enum ToolContent: Sendable, Hashable {
  /// Text for the model to read.
  case text(String)

  /// The block as JSON.
  public var json: JSONValue {
    switch self {
    case .text(let text): return ["type": "text", "text": .string(text)]
    }
  }
}

/// What a tool call returns: content blocks, optional structured content, and whether it failed.
///
/// Failures the model can act on (bad arguments, nothing found to forget) are results with
/// `isError` true, not protocol errors, so the model sees the message and can retry.
public struct ToolResult: Sendable, Hashable {
  /// Content blocks, usually one text block.
  public var content: [ToolContent]
  /// A JSON object matching the tool's output schema, if it has one.
  public var structuredContent: JSONValue?
  /// Whether the call failed.
  public var isError: Bool

  /// Creates a result.
  public init(content: [ToolContent], structuredContent: JSONValue? = nil, isError: Bool = false) {
    self.content = content
    self.structuredContent = structuredContent
    self.isError = isError
  }

  /// A successful result with one text block.
  public static func text(_ text: String) -> ToolResult {
    ToolResult(content: [.text(text)])
  }

  /// A successful structured result; the text block carries the same JSON (for clients
  /// that read only text) unless `text` is given.
  public static func structured(_ value: JSONValue, text: String? = nil) -> ToolResult {
    ToolResult(content: [.text(text ?? value.jsonText)], structuredContent: value)
  }

  /// A failed result whose message tells the model what to change.
  public static func error(_ message: String) -> ToolResult {
    ToolResult(content: [.text(message)], isError: true)
  }

  /// The result as the `tools/call` response body.
  public var json: JSONValue {
    var members: [String: JSONValue] = [
      "content": .array(content.map(\.json)), "isError": .bool(isError),
    ]
    if let structuredContent { members["structuredContent"] = structuredContent }
    return .object(members)
  }
}
