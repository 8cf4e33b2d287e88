import EngramCore

/// The tools a server offers and how to call them; the engine side of `engram mcp` implements it.
public protocol ToolProvider: Sendable {
  /// The tools, in the order `tools/list` returns them.
  var tools: [MCPTool] { get }

  /// Calls the tool `name` with arguments already checked against its input schema.
  ///
  /// Return ``ToolResult/error(_:)`` or throw ``ToolError`` for failures the model should see;
  /// any other error thrown also becomes an `isError` result carrying its description.
  func call(name: String, arguments: [String: JSONValue]) async throws -> ToolResult
}

/// A tool failure with a message for the model (what went wrong and what to do instead).
public struct ToolError: Error, Sendable, Hashable, CustomStringConvertible {
  /// The message.
  public var message: String

  /// Creates a tool error.
  public init(_ message: String) {
    self.message = message
  }

  /// The message.
  public var description: String { message }
}
