import Engram
import EngramEmbeddings
import EngramHTTP
import EngramTestSupport
import Foundation
import Testing

@testable import EngramCLI

/// `engram serve --users`: each API request's bearer token selects its user; a user sees only
/// their own memory, whatever the request says, and no token (or another one) gets 401.
@Suite(.timeLimit(.minutes(5)), .watchdog) struct ServeUsersTests {
  @Test func eachTokenSeesOnlyItsUsersMemory() async throws {
    let folder = try ScratchFolder()
    var users = UsersFile()
    let ann = try users.add("ann")
    let bob = try users.add("bob")
    let path = folder.path("shared.sqlite")
    let engines = UserEngines(users: users) { user in
      var configuration = EngramConfiguration(embedder: try HashingEmbedder(dimension: 64))
      configuration.user = user
      configuration.readerCount = 1
      return try MemoryEngine(path: path, configuration: configuration)
    }
    let app = WebApp(
      configuration: HTTPTransportConfiguration(host: "127.0.0.1", port: 0), context: .users(engines),
      log: { _ in })
    #expect(app.servesManyUsers)
    for (user, token) in [("ann", ann), ("bob", bob)] {
      let lease = try await engines.lease(user: user)
      _ = try await lease.engine.memories.remember(
        "the \(user) garage code is \(user == "ann" ? 1111 : 2222)")
      lease.release()
      _ = token
    }
    func search(_ token: String?, _ query: String = "garage code") async throws -> HTTPResponse {
      await app.respond(
        to: WebAPITests.get(
          "/api/search?q=\(query.replacingOccurrences(of: " ", with: "%20"))",
          headers: token.map { [("Authorization", "Bearer \($0)")] } ?? []))
    }
    let annHits = try WebAPITests.json(try await search(ann))["hits"]?.arrayValue ?? []
    #expect(annHits.map { $0["text"]?.stringValue } == ["the ann garage code is 1111"])
    let bobHits =
      try WebAPITests.json(try await search(bob, "ann garage code 1111"))["hits"]?.arrayValue ?? []
    #expect(bobHits.map { $0["text"]?.stringValue } == ["the bob garage code is 2222"])
    #expect(try await search(nil).status == 401)
    #expect(try await search("not-a-token-of-anyone-at-all-000000000").status == 401)
    await engines.close()
  }
}
