import EngramPostgres
import EngramPostgresTestSupport
import EngramStore
import EngramTestSupport
import Foundation
import Testing

/// `engram` commands with `--db postgresql://...` (and `ENGRAM_DB`) against a real server.
@Suite("CLI on PostgreSQL", .timeLimit(.minutes(5)), .watchdog, .offPool)
struct PostgresCommandsTests {
  @Test func everyCommandWorksOnAPostgreSQLLocation() async throws {
    try await PostgresTestServer.inDatabase { _, url in
      let folder = FileManager.default.temporaryDirectory.appendingPathComponent("engram-pg-cli-\(UUID())")
      try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
      defer { try? FileManager.default.removeItem(at: folder) }
      func engram(_ arguments: [String]) async throws -> EngramBinary.Result {
        try await EngramBinary.run(arguments, environment: ["ENGRAM_DB": url])
      }
      // No schema yet: read commands say so and create nothing.
      let missing = try await engram(["query", "anything"])
      #expect(missing.status == 1 && missing.standardError.contains("engram init"))
      #expect(try await engram(["init", "--model", "hashing"]).status == 0)
      #expect(try await engram(["init"]).standardOutput.contains("already exists"))
      let remembered = try await engram(["remember", "Ann's", "flight", "lands", "at", "9"])
      #expect(remembered.status == 0, "\(remembered.standardError)")
      let query = try await engram(["query", "when does the flight land"])
      #expect(query.status == 0 && query.standardOutput.contains("Ann's flight lands at 9"))
      // --db wins over ENGRAM_DB, as for a file.
      let byOption = try await EngramBinary.run(
        ["query", "flight", "--db", url], environment: ["ENGRAM_DB": "/nonexistent/x"])
      #expect(byOption.standardOutput.contains("Ann's flight lands at 9"))
      let export = folder.appendingPathComponent("out.jsonl").path
      #expect(try await engram(["export", export]).status == 0)
      #expect(try await engram(["doctor"]).status == 0)
      #expect(try await engram(["forget", "1"]).status == 0)
      #expect(!(try await engram(["query", "flight"]).standardOutput.contains("Ann's flight")))
      // The export imports into a SQLite file with the same answer.
      let file = folder.appendingPathComponent("copy.sqlite").path
      #expect(try await EngramBinary.run(["import", export, "--db", file]).status == 0)
      #expect(
        try await EngramBinary.run(["query", "flight", "--db", file]).standardOutput.contains(
          "Ann's flight lands at 9"))
      // Nothing was created in the working folder for the URI.
      #expect(!FileManager.default.fileExists(atPath: "postgresql:"))
    }
  }
}
