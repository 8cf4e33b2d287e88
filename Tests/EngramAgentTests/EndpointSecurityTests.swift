import EngramTestSupport
import Foundation
import Testing

@testable import EngramAgent

/// The language-model client sends prompts (with memories) only over https, or plain http to
/// this machine.
@Suite(.timeLimit(.minutes(5)), .watchdog) struct EndpointSecurityTests {
  @Test(arguments: [
    "http://127.0.0.1.nip.io", "http://127.evil.example", "http://localhost.example.com",
    "http://10.0.0.5:11434",
    "http://0.0.0.0:11434", "http://[::ffff:7f00:1]",
  ])
  func remotePlainHTTPIsRefused(_ address: String) throws {
    let url = try #require(URL(string: address))
    #expect {
      try OpenAIChatClient(configuration: .init(baseURL: url, model: "m"), environment: [:])
    } throws: { error in
      guard case .insecureEndpoint = error as? LanguageModelError else { return false }
      return true
    }
    // Allowed when the application says so explicitly.
    let allowed = try OpenAIChatClient(
      configuration: .init(baseURL: url, model: "m", allowInsecureRemote: true), environment: [:])
    #expect(allowed.configuration.baseURL == url)
  }

  @Test(arguments: [
    "http://localhost:11434", "http://127.0.0.1:8080", "http://[::1]:11434", "http://api.localhost",
  ])
  func loopbackPlainHTTPIsAllowed(_ address: String) throws {
    let url = try #require(URL(string: address))
    let client = try OpenAIChatClient(configuration: .init(baseURL: url, model: "m"), environment: [:])
    #expect(client.configuration.baseURL == url)
  }
}
