import EngramCore
import EngramHTTP

/// A tool whose arguments are one ``Arguments`` type: its input schema is that type's, and a
/// call decodes the arguments into it before `run` sees them.
public struct TypedTool: Sendable {
  /// The tool as `tools/list` shows it (its input schema derived from the arguments type).
  public let description: MCPTool
  private let invoke: @Sendable ([String: JSONValue]) async throws -> ToolResult

  /// Declares tool `name` taking `Input`.
  public init<Input: Arguments>(
    _ name: String, title: String, description: String, input: Input.Type, output: JSONValue,
    annotations: ToolAnnotations, run: @escaping @Sendable (Input) async throws -> ToolResult
  ) {
    self.description = MCPTool(
      name: name, title: title, description: description, inputSchema: Input.jsonSchema, outputSchema: output,
      annotations: annotations)
    invoke = { members in
      let input: Input
      do throws(ArgumentError) {
        input = try Input.decode(members)
      } catch {
        throw ToolError(error.description)
      }
      return try await run(input)
    }
  }

  /// Decodes `arguments` and runs the tool.
  /// - Throws: ``ToolError`` naming the field for arguments that do not decode; the tool's errors.
  public func call(_ arguments: [String: JSONValue]) async throws -> ToolResult {
    try await invoke(arguments)
  }
}
