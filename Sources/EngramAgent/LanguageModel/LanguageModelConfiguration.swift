import Foundation

/// Where and how to reach an OpenAI-compatible chat server (OpenAI, Ollama, llama.cpp server).
public struct LanguageModelConfiguration: Sendable, Hashable {
  /// The server root; requests go to `{baseURL}/v1/chat/completions`. Default: local Ollama.
  public var baseURL: URL
  /// The model name sent with each request.
  public var model: String
  /// The environment variable holding the API key, sent as a bearer token when set.
  public var apiKeyEnvironmentVariable: String?
  /// How long one request may take; for a streamed reply, how long each wait for the server
  /// may take (the first byte, then every next chunk). Default: 60 seconds.
  public var timeout: Duration
  /// Allows plain http to non-loopback hosts (off: keys and memories would cross the network in clear).
  public var allowInsecureRemote: Bool
  /// Sampling temperature; 0 keeps planning deterministic. Nil leaves the server default.
  public var temperature: Double?
  /// The reply length limit, if any.
  public var maxTokens: Int?

  /// Creates a configuration with documented defaults.
  public init(
    baseURL: URL = URL(string: "http://127.0.0.1:11434")!, model: String,
    apiKeyEnvironmentVariable: String? = "ENGRAM_LLM_API_KEY", timeout: Duration = .seconds(60),
    allowInsecureRemote: Bool = false, temperature: Double? = 0, maxTokens: Int? = nil
  ) {
    self.baseURL = baseURL
    self.model = model
    self.apiKeyEnvironmentVariable = apiKeyEnvironmentVariable
    self.timeout = timeout
    self.allowInsecureRemote = allowInsecureRemote
    self.temperature = temperature
    self.maxTokens = maxTokens
  }

  /// The chat-completions endpoint, after checking scheme, host and transport security.
  /// - Throws: `LanguageModelError.invalidBaseURL`, `.insecureEndpoint`, `.emptyModelName`.
  public func validatedEndpoint() throws(LanguageModelError) -> URL {
    guard !model.trimmingCharacters(in: .whitespaces).isEmpty else { throw .emptyModelName }
    guard let scheme = baseURL.scheme?.lowercased(), scheme == "http" || scheme == "https",
      let host = baseURL.host, !host.isEmpty
    else { throw .invalidBaseURL(baseURL.absoluteString) }
    if scheme == "http", !allowInsecureRemote, !Self.isLoopback(host) { throw .insecureEndpoint(host: host) }
    var root = baseURL.absoluteString
    while root.hasSuffix("/") { root.removeLast() }
    // Accept a base that already names the API version (http://host/v1).
    if !root.hasSuffix("/v1") { root += "/v1" }
    guard let url = URL(string: root + "/chat/completions") else {
      throw .invalidBaseURL(baseURL.absoluteString)
    }
    return url
  }

  /// llama.cpp's `/tokenize` endpoint beside the API (`{server root}/tokenize`, the root being
  /// the base URL without a trailing `/v1`), after the same checks as `validatedEndpoint`.
  /// - Throws: `LanguageModelError.invalidBaseURL`, `.insecureEndpoint`, `.emptyModelName`.
  public func tokenizeEndpoint() throws(LanguageModelError) -> URL {
    _ = try validatedEndpoint()
    var root = baseURL.absoluteString
    while root.hasSuffix("/") { root.removeLast() }
    if root.hasSuffix("/v1") { root.removeLast(3) }
    guard let url = URL(string: root + "/tokenize") else { throw .invalidBaseURL(baseURL.absoluteString) }
    return url
  }

  /// Whether `host` is the local machine (localhost, 127.0.0.0/8, ::1).
  public static func isLoopback(_ host: String) -> Bool {
    let bare = host.trimmingCharacters(in: CharacterSet(charactersIn: "[]")).lowercased()
    if bare == "localhost" || bare == "::1" || bare.hasSuffix(".localhost") { return true }
    let octets = bare.split(separator: ".", omittingEmptySubsequences: false)
    return octets.count == 4 && octets[0] == "127" && octets.allSatisfy { UInt8($0) != nil }
  }
}
