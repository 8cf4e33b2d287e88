import EngramCore

/// A JSON-RPC 2.0 error object returned in place of a result.
public struct JSONRPCError: Error, Sendable, Hashable {
  /// The error code (see the static codes).
  public var code: Int
  /// A short description.
  public var message: String
  /// Extra detail, if any.
  public var data: JSONValue?

  /// Creates an error.
  public init(code: Int, message: String, data: JSONValue? = nil) {
    self.code = code
    self.message = message
    self.data = data
  }

  /// The line is not JSON.
  public static let parseErrorCode = -32700
  /// The JSON is not a valid request object (or is a batch, which MCP 2025-06-18 removed).
  public static let invalidRequestCode = -32600
  /// The method is not offered.
  public static let methodNotFoundCode = -32601
  /// The parameters are wrong, or the tool named does not exist.
  public static let invalidParamsCode = -32602
  /// The server failed while handling the request.
  public static let internalErrorCode = -32603

  /// A parse error.
  public static func parseError(_ detail: String? = nil) -> JSONRPCError {
    JSONRPCError(code: parseErrorCode, message: "Parse error" + (detail.map { ": \($0)" } ?? ""))
  }

  /// An invalid request.
  public static func invalidRequest(_ detail: String) -> JSONRPCError {
    JSONRPCError(code: invalidRequestCode, message: "Invalid request: \(detail)")
  }

  /// An unknown method.
  public static func methodNotFound(_ method: String) -> JSONRPCError {
    JSONRPCError(code: methodNotFoundCode, message: "Method not found: \(method)")
  }

  /// Invalid parameters.
  public static func invalidParams(_ detail: String) -> JSONRPCError {
    JSONRPCError(code: invalidParamsCode, message: "Invalid params: \(detail)")
  }

  /// The error as a JSON object.
  public var json: JSONValue {
    var members: [String: JSONValue] = ["code": .int(code), "message": .string(message)]
    if let data { members["data"] = data }
    return .object(members)
  }
}
