import EngramTestSupport
import Foundation
import Testing

@testable import EngramEmbeddings

/// Plain http is only for this machine: names that merely look like loopback are remote.
@Suite(.timeLimit(.minutes(5)), .watchdog) struct EndpointSecurityTests {
  static let loopback = [
    "http://localhost:11434", "http://127.0.0.1:8080", "http://127.1.2.3", "http://[::1]:11434",
    "http://LOCALHOST", "http://api.localhost:9000",
  ]
  static let remote = [
    "http://127.0.0.1.nip.io", "http://127.evil.example", "http://127.0.0.1.example.com:11434",
    "http://localhost.example.com", "http://10.0.0.5:11434", "http://0.0.0.0:11434", "http://128.0.0.1",
    "http://[::ffff:7f00:1]", "http://example.com",
  ]

  @Test(arguments: loopback)
  func loopbackPlainHTTPIsAllowed(_ address: String) throws {
    let url = try #require(URL(string: address))
    let embedder = try HTTPEmbedder(.init(baseURL: url, api: .openAI, model: "m", dimension: 4))
    #expect(embedder.configuration.baseURL == url)
    #expect(!embedder.configuration.allowInsecureRemote)
  }

  @Test(arguments: remote)
  func remotePlainHTTPIsRefused(_ address: String) throws {
    let url = try #require(URL(string: address))
    #expect(throws: EmbeddingError.insecureURL(url.absoluteString)) {
      _ = try HTTPEmbedder(.init(baseURL: url, api: .openAI, model: "m", dimension: 4))
    }
    // Allowed when the application says so explicitly, and always over https.
    let allowed = try HTTPEmbedder(
      .init(baseURL: url, api: .openAI, model: "m", dimension: 4, allowInsecureRemote: true))
    #expect(allowed.configuration.baseURL == url)
    let secure = try #require(URL(string: address.replacingOccurrences(of: "http://", with: "https://")))
    let overTLS = try HTTPEmbedder(.init(baseURL: secure, api: .openAI, model: "m", dimension: 4))
    #expect(overTLS.configuration.baseURL == secure)
  }
}
