import Foundation

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// Embeds through an embedding server: OpenAI-compatible `POST /v1/embeddings`
/// (`{"model", "input": [...]}` → `data[].embedding`) or Ollama `POST /api/embed`
/// (`{"model", "input": [...]}` → `embeddings`).
///
/// Vectors are checked (count, dimension, finite, non-zero) and L2-normalized.
public struct HTTPEmbedder: Embedder {
  /// Which wire format the server speaks.
  public enum API: String, Sendable {
    /// `POST {baseURL}/v1/embeddings`, answer `{"data": [{"index", "embedding"}]}`.
    case openAI
    /// `POST {baseURL}/api/embed`, answer `{"embeddings": [[...]]}`.
    case ollama
  }

  /// Where and how to reach the server.
  public struct Configuration: Sendable {
    /// Server root, for example `http://127.0.0.1:11434` or `https://api.openai.com`.
    public var baseURL: URL
    /// Wire format.
    public var api: API
    /// Model name sent in each request.
    public var model: String
    /// Length of the vectors the model returns; answers of any other length are rejected.
    public var dimension: Int
    /// Name of the environment variable holding a bearer token; nil sends none.
    public var apiKeyVariable: String?
    /// Seconds before a request is abandoned (default 30).
    public var timeout: Double
    /// Texts per request (default 64).
    public var batchSize: Int
    /// Longest input the model reads, reported as `maxSequenceLength` (default 8192).
    public var maxSequenceLength: Int
    /// Allows plain `http://` to a host other than this machine (default false: keys and
    /// memories would cross the network unencrypted).
    public var allowInsecureRemote: Bool

    /// A configuration with documented defaults.
    public init(
      baseURL: URL, api: API, model: String, dimension: Int, apiKeyVariable: String? = nil,
      timeout: Double = 30, batchSize: Int = 64, maxSequenceLength: Int = 8192,
      allowInsecureRemote: Bool = false
    ) {
      self.baseURL = baseURL
      self.api = api
      self.model = model
      self.dimension = dimension
      self.apiKeyVariable = apiKeyVariable
      self.timeout = timeout
      self.batchSize = batchSize
      self.maxSequenceLength = maxSequenceLength
      self.allowInsecureRemote = allowInsecureRemote
    }
  }

  /// The validated configuration.
  public let configuration: Configuration
  /// `http:<model>`.
  public var modelID: String { "http:" + configuration.model }
  /// `configuration.dimension`.
  public var dimension: Int { configuration.dimension }
  /// `configuration.maxSequenceLength`.
  public var maxSequenceLength: Int { configuration.maxSequenceLength }

  private let endpoint: URL
  private let apiKey: String?

  /// Validates `configuration` and reads the API key from the environment once.
  /// - Throws: `.invalidURL`, `.insecureURL`, `.missingAPIKey`, `.invalidDimension`, `.invalidOption`.
  public init(
    _ configuration: Configuration, environment: [String: String] = ProcessInfo.processInfo.environment
  ) throws(EmbeddingError) {
    let url = configuration.baseURL
    guard let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https",
      let host = url.host, !host.isEmpty
    else { throw .invalidURL(url.absoluteString) }
    if scheme == "http" && !configuration.allowInsecureRemote && !Self.isLoopback(host) {
      throw .insecureURL(url.absoluteString)
    }
    guard configuration.dimension > 0 else { throw .invalidDimension(configuration.dimension) }
    guard configuration.batchSize > 0 else {
      throw .invalidOption(name: "batchSize", value: String(configuration.batchSize))
    }
    guard configuration.timeout > 0, configuration.timeout.isFinite else {
      throw .invalidOption(name: "timeout", value: String(configuration.timeout))
    }
    guard !configuration.model.isEmpty else { throw .invalidOption(name: "model", value: "") }
    if let variable = configuration.apiKeyVariable {
      guard let key = environment[variable], !key.isEmpty else { throw .missingAPIKey(variable: variable) }
      apiKey = key
    } else {
      apiKey = nil
    }
    let path = configuration.api == .openAI ? "v1/embeddings" : "api/embed"
    endpoint = url.appendingPathComponent(path)
    self.configuration = configuration
  }

  /// Whether `host` names this machine (`localhost`, `127.0.0.0/8`, `::1`).
  static func isLoopback(_ host: String) -> Bool {
    let bare = host.trimmingCharacters(in: CharacterSet(charactersIn: "[]")).lowercased()
    if bare == "localhost" || bare == "::1" || bare.hasSuffix(".localhost") { return true }
    // A literal 127.x.y.z address only: a name such as `127.0.0.1.example.com` resolves anywhere.
    let octets = bare.split(separator: ".", omittingEmptySubsequences: false)
    return octets.count == 4 && octets[0] == "127" && octets.allSatisfy { UInt8($0) != nil }
  }

  /// Embeds `texts` in requests of `batchSize`, in order.
  /// - Throws: `EmbeddingError.emptyInput` for an empty text (servers reject them), and the
  ///   connection, status and response errors of each request.
  public func embed(_ texts: [String]) async throws -> [[Float]] {
    for (index, text) in texts.enumerated() where text.allSatisfy(\.isWhitespace) {
      throw EmbeddingError.emptyInput(index: index)
    }
    var vectors: [[Float]] = []
    vectors.reserveCapacity(texts.count)
    var start = 0
    while start < texts.count {
      let end = min(start + configuration.batchSize, texts.count)
      vectors += try await request(Array(texts[start..<end]), firstIndex: start)
      start = end
    }
    return vectors
  }

  private func request(_ texts: [String], firstIndex: Int) async throws(EmbeddingError) -> [[Float]] {
    var request = URLRequest(url: endpoint, timeoutInterval: configuration.timeout)
    request.httpMethod = "POST"
    request.setValue("application/json", forHTTPHeaderField: "Content-Type")
    request.setValue("application/json", forHTTPHeaderField: "Accept")
    if let apiKey { request.setValue("Bearer \(apiKey)", forHTTPHeaderField: "Authorization") }
    let body: [String: Any] = ["model": configuration.model, "input": texts]
    request.httpBody = try? JSONSerialization.data(withJSONObject: body)

    let data: Data
    let response: URLResponse
    do {
      (data, response) = try await URLSession.shared.data(for: request)
    } catch let error as URLError {
      if error.code == .timedOut {
        throw .timedOut(url: endpoint.absoluteString, seconds: configuration.timeout)
      }
      throw .connectionFailed(url: endpoint.absoluteString, reason: Self.reason(error))
    } catch {
      throw .connectionFailed(url: endpoint.absoluteString, reason: String(describing: error))
    }
    guard let http = response as? HTTPURLResponse else {
      throw .malformedResponse(url: endpoint.absoluteString, reason: "not an HTTP response")
    }
    guard (200..<300).contains(http.statusCode) else {
      let excerpt = String(decoding: data.prefix(300), as: UTF8.self)
      throw .httpStatus(code: http.statusCode, url: endpoint.absoluteString, bodyExcerpt: excerpt)
    }
    let rows = try parse(data)
    guard rows.count == texts.count else { throw .countMismatch(expected: texts.count, actual: rows.count) }
    var vectors: [[Float]] = []
    vectors.reserveCapacity(rows.count)
    for (offset, row) in rows.enumerated() {
      vectors.append(try normalized(row, index: firstIndex + offset))
    }
    return vectors
  }

  /// The rows of numbers in the answer, in input order.
  private func parse(_ data: Data) throws(EmbeddingError) -> [[Any]] {
    let url = endpoint.absoluteString
    guard let root = try? JSONSerialization.jsonObject(with: data) as? [String: Any] else {
      throw .malformedResponse(url: url, reason: "the body is not a JSON object")
    }
    switch configuration.api {
    case .ollama:
      guard let rows = root["embeddings"] as? [[Any]] else {
        throw .malformedResponse(url: url, reason: "no \"embeddings\" array of arrays")
      }
      return rows
    case .openAI:
      guard let items = root["data"] as? [[String: Any]] else {
        throw .malformedResponse(url: url, reason: "no \"data\" array of objects")
      }
      var indexed: [(Int, [Any])] = []
      for (position, item) in items.enumerated() {
        guard let row = item["embedding"] as? [Any] else {
          throw .malformedResponse(url: url, reason: "data[\(position)] has no \"embedding\" array")
        }
        indexed.append(((item["index"] as? NSNumber)?.intValue ?? position, row))
      }
      let sorted = indexed.sorted { $0.0 < $1.0 }
      guard sorted.map(\.0) == Array(0..<sorted.count) else {
        throw .malformedResponse(url: url, reason: "data[].index is not 0..<\(sorted.count)")
      }
      return sorted.map(\.1)
    }
  }

  private func normalized(_ row: [Any], index: Int) throws(EmbeddingError) -> [Float] {
    guard row.count == configuration.dimension else {
      throw .dimensionMismatch(expected: configuration.dimension, actual: row.count, index: index)
    }
    var vector = [Float](repeating: 0, count: row.count)
    var squares: Double = 0
    for (slot, value) in row.enumerated() {
      guard type(of: value) != Bool.self, let double = (value as? NSNumber)?.doubleValue ?? (value as? Double)
      else {
        throw .malformedResponse(url: endpoint.absoluteString, reason: "vector \(index) holds a non-number")
      }
      // Overflowing literals such as 1e999 parse to infinity; a lenient parser may pass NaN.
      guard double.isFinite, Float(double).isFinite else { throw .nonFiniteValue(index: index) }
      vector[slot] = Float(double)
      squares += double * double
    }
    guard squares > 0 else { throw .zeroVector(index: index) }
    let inverse = Float(1 / squares.squareRoot())
    for slot in vector.indices { vector[slot] *= inverse }
    return vector
  }

  private static func reason(_ error: URLError) -> String {
    switch error.code {
    case .cannotConnectToHost: return "connection refused"
    case .cannotFindHost: return "unknown host"
    case .networkConnectionLost: return "connection lost"
    case .notConnectedToInternet: return "no network"
    case .secureConnectionFailed: return "TLS handshake failed"
    default: return "URLError \(error.code.rawValue): \(error.localizedDescription)"
    }
  }
}
