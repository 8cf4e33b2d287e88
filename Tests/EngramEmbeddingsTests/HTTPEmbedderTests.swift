import EngramEmbeddings
import EngramTestSupport
import Foundation
import Testing

@Suite("HTTPEmbedder against a local server", .timeLimit(.minutes(5)), .watchdog)
struct HTTPEmbedderTests {
  static func vectorJSON(_ seed: Int, dimension: Int) -> String {
    "[" + (0..<dimension).map { String(Double(($0 + seed) % 5) + 0.5) }.joined(separator: ",") + "]"
  }

  static func texts(in body: Data) -> [String] {
    let object = try? JSONSerialization.jsonObject(with: body) as? [String: Any]
    return object?["input"] as? [String] ?? []
  }

  func embedder(_ server: LocalHTTPServer, _ api: HTTPEmbedder.API, dimension: Int = 4, batchSize: Int = 64)
    throws -> HTTPEmbedder
  {
    try HTTPEmbedder(
      .init(
        baseURL: server.baseURL, api: api, model: "test-model", dimension: dimension, batchSize: batchSize))
  }

  @Test("OpenAI-compatible /v1/embeddings: order by index, unit vectors, batches")
  func openAI() async throws {
    let server = try LocalHTTPServer { path, body in
      guard path == "/v1/embeddings" else { return (404, "{}") }
      let texts = Self.texts(in: body)
      // Answer in reverse order: the client must sort by index.
      let items = texts.indices.reversed().map { index in
        "{\"object\":\"embedding\",\"index\":\(index),\"embedding\":\(Self.vectorJSON(texts[index].count, dimension: 4))}"
      }
      return (200, "{\"object\":\"list\",\"data\":[" + items.joined(separator: ",") + "]}")
    }
    defer { server.stop() }
    let client = try embedder(server, .openAI, batchSize: 2)
    #expect(client.modelID == "http:test-model")
    let vectors = try await client.embed(["a", "bbb", "cc"])
    #expect(vectors.count == 3)
    for vector in vectors {
      #expect(vector.count == 4)
      #expect(abs(vector.reduce(0) { $0 + $1 * $1 } - 1) < 1e-5)
    }
    #expect(vectors[0] != vectors[1])
    let requests = server.received
    #expect(requests.count == 2)
    let first = try #require(requests.first)
    let sent = try #require(try JSONSerialization.jsonObject(with: first.body) as? [String: Any])
    #expect(sent["model"] as? String == "test-model")
    #expect(sent["input"] as? [String] == ["a", "bbb"])
  }

  @Test("Ollama /api/embed")
  func ollama() async throws {
    let server = try LocalHTTPServer { path, body in
      guard path == "/api/embed" else { return (404, "{}") }
      let rows = Self.texts(in: body).map { Self.vectorJSON($0.count, dimension: 3) }
      return (200, "{\"model\":\"m\",\"embeddings\":[" + rows.joined(separator: ",") + "]}")
    }
    defer { server.stop() }
    let vectors = try await embedder(server, .ollama, dimension: 3).embed(["x", "yy"])
    #expect(vectors.count == 2)
    #expect(vectors.allSatisfy { $0.count == 3 })
    #expect(server.received.map(\.path) == ["/api/embed"])
  }

  @Test("empty list makes no request")
  func emptyList() async throws {
    let server = try LocalHTTPServer { _, _ in (500, "{}") }
    defer { server.stop() }
    let vectors = try await embedder(server, .openAI).embed([])
    #expect(vectors.isEmpty)
    #expect(server.received.isEmpty)
  }

  @Test("HTTP 500 carries the status and a body excerpt")
  func serverError() async throws {
    let server = try LocalHTTPServer { _, _ in (500, "{\"error\":\"model exploded\"}") }
    defer { server.stop() }
    let client = try embedder(server, .openAI)
    await #expect {
      _ = try await client.embed(["hello"])
    } throws: { error in
      guard case .httpStatus(500, _, let excerpt) = error as? EmbeddingError else { return false }
      return excerpt.contains("model exploded")
    }
  }

  @Test("a vector of the wrong dimension is rejected")
  func wrongDimension() async throws {
    let server = try LocalHTTPServer { _, _ in (200, "{\"embeddings\":[[0.1,0.2,0.3]]}") }
    defer { server.stop() }
    let client = try embedder(server, .ollama, dimension: 4)
    await #expect(throws: EmbeddingError.dimensionMismatch(expected: 4, actual: 3, index: 0)) {
      _ = try await client.embed(["hello"])
    }
  }

  @Test("malformed JSON, missing keys, wrong count, non-finite and zero vectors are rejected")
  func malformed() async throws {
    let answers = [
      "not json", "{\"data\": 3}", "{\"embeddings\":[[1,0,0,0],[0,1,0,0]]}",
      "{\"embeddings\":[[1e999,0,0,0]]}",
      "{\"embeddings\":[[NaN,0,0,0]]}", "{\"embeddings\":[[0,0,0,0]]}",
    ]
    for answer in answers {
      let server = try LocalHTTPServer { _, _ in (200, answer) }
      defer { server.stop() }
      let client = try embedder(server, .ollama)
      await #expect(throws: EmbeddingError.self, "\(answer)") { _ = try await client.embed(["hello"]) }
    }
  }

  @Test("connection refused on a closed port")
  func connectionRefused() async throws {
    let port = try LocalHTTPServer.closedPort()
    let client = try HTTPEmbedder(
      .init(baseURL: URL(string: "http://127.0.0.1:\(port)")!, api: .openAI, model: "m", dimension: 4))
    await #expect {
      _ = try await client.embed(["hello"])
    } throws: { error in
      guard case .connectionFailed = error as? EmbeddingError else { return false }
      return true
    }
  }

  @Test("plain http to a remote host is refused unless allowed")
  func insecureRemote() throws {
    let remote = URL(string: "http://example.com:8080")!
    #expect(throws: EmbeddingError.insecureURL(remote.absoluteString)) {
      _ = try HTTPEmbedder(.init(baseURL: remote, api: .openAI, model: "m", dimension: 4))
    }
    let allowed = try HTTPEmbedder(
      .init(baseURL: remote, api: .openAI, model: "m", dimension: 4, allowInsecureRemote: true))
    #expect(allowed.configuration.baseURL == remote)
    let secure = URL(string: "https://example.com")!
    #expect(
      try HTTPEmbedder(.init(baseURL: secure, api: .openAI, model: "m", dimension: 4)).configuration.baseURL
        == secure)
    let loopback = URL(string: "http://localhost:1")!
    let local = try HTTPEmbedder(.init(baseURL: loopback, api: .ollama, model: "m", dimension: 4))
    #expect(local.configuration.baseURL == loopback && local.modelID == "http:m")
  }

  @Test("bad configuration: scheme, dimension, batch size, missing API key")
  func badConfiguration() throws {
    let local = URL(string: "http://127.0.0.1:1")!
    #expect(throws: EmbeddingError.invalidURL("ftp://127.0.0.1")) {
      _ = try HTTPEmbedder(
        .init(baseURL: URL(string: "ftp://127.0.0.1")!, api: .openAI, model: "m", dimension: 4))
    }
    #expect(throws: EmbeddingError.invalidDimension(0)) {
      _ = try HTTPEmbedder(.init(baseURL: local, api: .openAI, model: "m", dimension: 0))
    }
    #expect(throws: EmbeddingError.invalidOption(name: "batchSize", value: "0")) {
      _ = try HTTPEmbedder(.init(baseURL: local, api: .openAI, model: "m", dimension: 4, batchSize: 0))
    }
    #expect(throws: EmbeddingError.missingAPIKey(variable: "ENGRAM_TEST_KEY")) {
      _ = try HTTPEmbedder(
        .init(baseURL: local, api: .openAI, model: "m", dimension: 4, apiKeyVariable: "ENGRAM_TEST_KEY"),
        environment: [:])
    }
  }

  @Test("the API key is sent as a bearer token; empty texts are refused before any request")
  func apiKeyAndEmptyText() async throws {
    let server = try LocalHTTPServer { _, _ in (200, "{\"embeddings\":[[1,2,3,4]]}") }
    defer { server.stop() }
    let client = try HTTPEmbedder(
      .init(baseURL: server.baseURL, api: .ollama, model: "m", dimension: 4, apiKeyVariable: "KEY"),
      environment: ["KEY": "secret"])
    await #expect(throws: EmbeddingError.emptyInput(index: 1)) { _ = try await client.embed(["ok", "  "]) }
    #expect(server.received.isEmpty)
    let vector = try await client.embed(["ok"])
    #expect(vector.count == 1)
    let headers = try #require(server.received.first?.rawHeaders.lowercased())
    #expect(headers.contains("authorization: bearer secret"))
  }
}
