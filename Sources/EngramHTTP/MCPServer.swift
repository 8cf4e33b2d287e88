import EngramCore
import Foundation

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// The server's name and version as sent in `initialize`, plus optional instructions for the model.
public struct ServerInfo: Sendable, Hashable {
  /// A machine name (`engram`).
  public var name: String
  /// The version.
  public var version: String
  /// A human title.
  public var title: String?
  /// How to use the server, for the model (sent as `instructions`).
  public var instructions: String?

  /// Creates server information.
  public init(name: String, version: String, title: String? = nil, instructions: String? = nil) {
    self.name = name
    self.version = version
    self.title = title
    self.instructions = instructions
  }
}

/// A Model Context Protocol server over newline-delimited JSON-RPC 2.0, offering tools.
///
/// Messages are handled one at a time in arrival order; only protocol messages go to the sink,
/// logs go to `log` (standard error by default). The server stops when the input ends.
/// Requests before `initialize` are served rather than refused, to tolerate lax clients.
public actor MCPServer {
  /// Protocol versions this server speaks, newest first.
  public static let supportedProtocolVersions = ["2025-11-25", "2025-06-18"]

  /// Name, version and instructions sent in `initialize`.
  public let info: ServerInfo
  private let provider: any ToolProvider
  private let log: @Sendable (String) -> Void

  /// The protocol version agreed in `initialize`, if it happened.
  public private(set) var negotiatedProtocolVersion: String?
  /// Whether the client sent `notifications/initialized`.
  public private(set) var isInitialized = false
  /// The `clientInfo` object the client sent, if any.
  public private(set) var clientInfo: JSONValue?

  /// Creates a server for `provider`'s tools.
  /// - Parameter log: Receives diagnostic lines; by default they go to standard error.
  public init(
    info: ServerInfo, provider: any ToolProvider,
    log: @escaping @Sendable (String) -> Void = MCPServer.logToStandardError
  ) {
    self.info = info
    self.provider = provider
    self.log = log
  }

  /// Writes `line` to standard error with the server prefix.
  public static func logToStandardError(_ line: String) {
    let bytes = Array("engram mcp: \(line)\n".utf8)
    _ = bytes.withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
  }

  /// Serves standard input and output until standard input ends.
  public func serveStandardIO() async throws {
    // A client that closes the pipe must end the loop with EPIPE, not kill the process.
    signal(SIGPIPE, SIG_IGN)
    try await serve(
      messages: LineInput.messages(fileDescriptor: 0), sink: FileDescriptorSink(fileDescriptor: 1))
  }

  /// Serves `messages` as ``serve(lines:sink:)`` does; a line over the size limit gets a
  /// JSON-RPC error (id null: its id was never read) and the server goes on with the next.
  public func serve(messages: AsyncThrowingStream<LineInput.Message, any Error>, sink: any MessageSink)
    async throws
  {
    log("serving \(provider.tools.count) tools")
    for try await message in messages {
      switch message {
      case .line(let line):
        if let response = await handle(message: line) { try sink.send(response) }
      case .tooLong(let bytes):
        log(
          "skipped a \(bytes)-byte message (over the \(LineInput.describe(bytes: LineInput.maximumLineLength)) limit)"
        )
        try sink.send(Self.oversizedResponse(bytes: bytes))
      }
    }
    log("input closed, shutting down")
  }

  /// The error answering a message over the size limit.
  static func oversizedResponse(bytes: Int) -> Data {
    let error = JSONRPCError.invalidRequest(
      "the message is \(bytes) bytes, over the \(LineInput.describe(bytes: LineInput.maximumLineLength)) limit; "
        + "it was skipped")
    let response = Self.response(id: .null, error: error)
    return (try? response.serialized()) ?? Data(response.jsonText.utf8)
  }

  /// Reads messages from `lines` and writes responses to `sink` until `lines` ends.
  /// - Throws: What `lines` throws, or ``TransportError`` when the sink fails.
  public func serve<Lines: AsyncSequence>(lines: Lines, sink: any MessageSink) async throws
  where Lines.Element == Data {
    log("serving \(provider.tools.count) tools")
    for try await line in lines {
      if let response = await handle(message: line) {
        try sink.send(response)
      }
    }
    log("input closed, shutting down")
  }

  /// Handles one message and returns the response line, or `nil` when none is due
  /// (notifications, responses, blank lines).
  public func handle(message data: Data) async -> Data? {
    await handle(message: data, provider: provider)
  }

  /// Handles one message with `provider`'s tools instead of the server's own (a multi-user
  /// HTTP server hands each request the provider of the user its token selects).
  public func handle(message data: Data, provider: any ToolProvider) async -> Data? {
    guard let response = await respond(to: data, provider: provider) else { return nil }
    return (try? response.serialized()) ?? Data(response.jsonText.utf8)
  }

  /// Handles one message given as text; see ``handle(message:)``.
  public func handle(line: String) async -> String? {
    guard let response = await handle(message: Data(line.utf8)) else { return nil }
    return String(decoding: response, as: UTF8.self)
  }

  private func respond(to data: Data, provider: any ToolProvider) async -> JSONValue? {
    if data.allSatisfy({ $0 == 0x20 || $0 == 0x09 || $0 == 0x0D }) { return nil }
    let message: JSONValue
    do {
      message = try JSONValue(parsing: data)
    } catch {
      log("parse error on a \(data.count)-byte line")
      return Self.response(id: .null, error: .parseError())
    }
    guard case .object(let members) = message else {
      if case .array = message {
        return Self.response(id: .null, error: .invalidRequest("batch requests are not supported"))
      }
      return Self.response(id: .null, error: .invalidRequest("a message must be a JSON object"))
    }
    // A valid id is a string or an integer; anything else makes the request unanswerable by id.
    let id = members["id"]
    if let id, id.stringValue == nil, id.intValue == nil {
      return Self.response(id: .null, error: .invalidRequest("id must be a string or an integer"))
    }
    let replyID = id ?? .null
    guard members["jsonrpc"] == "2.0" else {
      return id == nil ? nil : Self.response(id: replyID, error: .invalidRequest("jsonrpc must be \"2.0\""))
    }
    guard let methodValue = members["method"] else {
      // A response to a request we never send: nothing to answer.
      if members["result"] != nil || members["error"] != nil { return nil }
      return Self.response(id: replyID, error: .invalidRequest("missing method"))
    }
    guard let method = methodValue.stringValue else {
      return id == nil ? nil : Self.response(id: replyID, error: .invalidRequest("method must be a string"))
    }
    let params = members["params"]
    guard let id else {
      handleNotification(method)
      return nil
    }
    if let params, params.objectValue == nil {
      return Self.response(id: id, error: .invalidParams("params must be an object"))
    }
    do {
      let result = try await handleRequest(method, params: params?.objectValue ?? [:], provider: provider)
      return Self.response(id: id, result: result)
    } catch {
      return Self.response(id: id, error: error)
    }
  }

  private func handleNotification(_ method: String) {
    switch method {
    case "notifications/initialized":
      isInitialized = true
    case "notifications/cancelled":
      // Requests run one at a time and are finished before the next is read: nothing to cancel.
      break
    default:
      log("ignoring notification \(method)")
    }
  }

  private func handleRequest(
    _ method: String, params: [String: JSONValue], provider: any ToolProvider
  ) async throws(JSONRPCError)
    -> JSONValue
  {
    switch method {
    case "initialize":
      return try initialize(params)
    case "ping":
      return [:]
    case "tools/list":
      if let cursor = params["cursor"], cursor.stringValue == nil {
        throw .invalidParams("cursor must be a string")
      }
      return ["tools": .array(provider.tools.map(\.json))]
    case "tools/call":
      return try await callTool(params, provider: provider).json
    default:
      throw .methodNotFound(method)
    }
  }

  private func initialize(_ params: [String: JSONValue]) throws(JSONRPCError) -> JSONValue {
    guard let requested = params["protocolVersion"]?.stringValue else {
      throw .invalidParams("protocolVersion (a string) is required")
    }
    if let capabilities = params["capabilities"], capabilities.objectValue == nil {
      throw .invalidParams("capabilities must be an object")
    }
    if let client = params["clientInfo"], client.objectValue == nil {
      throw .invalidParams("clientInfo must be an object")
    }
    let version =
      Self.supportedProtocolVersions.contains(requested) ? requested : Self.supportedProtocolVersions[0]
    negotiatedProtocolVersion = version
    clientInfo = params["clientInfo"]
    let clientName = params["clientInfo"]?["name"]?.stringValue ?? "unknown client"
    log("initialize from \(clientName): requested \(requested), using \(version)")
    var serverInfo: [String: JSONValue] = ["name": .string(info.name), "version": .string(info.version)]
    if let title = info.title { serverInfo["title"] = .string(title) }
    var result: [String: JSONValue] = [
      "protocolVersion": .string(version),
      "capabilities": ["tools": ["listChanged": false]],
      "serverInfo": .object(serverInfo),
    ]
    if let instructions = info.instructions { result["instructions"] = .string(instructions) }
    return .object(result)
  }

  private func callTool(_ params: [String: JSONValue], provider: any ToolProvider) async throws(JSONRPCError)
    -> ToolResult
  {
    guard let name = params["name"]?.stringValue else {
      throw .invalidParams("name (a string) is required")
    }
    guard let tool = provider.tools.first(where: { $0.name == name }) else {
      throw .invalidParams("unknown tool '\(name)'")
    }
    let arguments: [String: JSONValue]
    switch params["arguments"] {
    case nil, .null?: arguments = [:]
    case .object(let members)?: arguments = members
    case let other?:
      // A malformed call (not a wrong argument value): a protocol error, like a missing name.
      throw .invalidParams("arguments must be an object, got \(other.typeName)")
    }
    let problems = JSONSchemaValidator.problems(in: .object(arguments), schema: tool.inputSchema)
    if !problems.isEmpty {
      return .error("Invalid arguments for \(name): " + problems.joined(separator: "; ") + ".")
    }
    do {
      return try await provider.call(name: name, arguments: arguments)
    } catch let error as ToolError {
      return .error(error.message)
    } catch {
      log("tool \(name) failed: \(error)")
      return .error("\(name) failed: \(error)")
    }
  }

  private static func response(id: JSONValue, result: JSONValue) -> JSONValue {
    ["jsonrpc": "2.0", "id": id, "result": result]
  }

  private static func response(id: JSONValue, error: JSONRPCError) -> JSONValue {
    ["jsonrpc": "2.0", "id": id, "error": error.json]
  }
}
