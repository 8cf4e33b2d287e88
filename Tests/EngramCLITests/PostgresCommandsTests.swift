import EngramStore
import EngramTestSupport
import Foundation
import Testing

/// `engram` commands with `--db postgresql://...` (and `ENGRAM_DB`) against a real server.
@Suite("CLI on PostgreSQL")
struct PostgresCommandsTests {
  @Test func everyCommandWorksOnAPostgreSQLLocation() throws {
    try PostgresTestServer.withDatabase { _, url in
      let folder = FileManager.default.temporaryDirectory.appendingPathComponent("engram-pg-cli-\(UUID())")
      try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
      defer { try? FileManager.default.removeItem(at: folder) }
      func engram(_ arguments: [String]) throws -> EngramBinary.Result {
        try EngramBinary.run(arguments, environment: ["ENGRAM_DB": url])
      }
      // No schema yet: read commands say so and create nothing.
      let missing = try engram(["query", "anything"])
      #expect(missing.status == 1 && missing.standardError.contains("engram init"))
      #expect(try engram(["init", "--model", "hashing"]).status == 0)
      #expect(try engram(["init"]).standardOutput.contains("already exists"))
      let remembered = try engram(["remember", "Ann's", "flight", "lands", "at", "9"])
      #expect(remembered.status == 0, "\(remembered.standardError)")
      let query = try engram(["query", "when does the flight land"])
      #expect(query.status == 0 && query.standardOutput.contains("Ann's flight lands at 9"))
      // --db wins over ENGRAM_DB, as for a file.
      let byOption = try EngramBinary.run(
        ["query", "flight", "--db", url], environment: ["ENGRAM_DB": "/nonexistent/x"])
      #expect(byOption.standardOutput.contains("Ann's flight lands at 9"))
      let export = folder.appendingPathComponent("out.jsonl").path
      #expect(try engram(["export", export]).status == 0)
      #expect(try engram(["doctor"]).status == 0)
      #expect(try engram(["forget", "1"]).status == 0)
      #expect(!(try engram(["query", "flight"]).standardOutput.contains("Ann's flight")))
      // The export imports into a SQLite file with the same answer.
      let file = folder.appendingPathComponent("copy.sqlite").path
      #expect(try EngramBinary.run(["import", export, "--db", file]).status == 0)
      #expect(
        try EngramBinary.run(["query", "flight", "--db", file]).standardOutput.contains(
          "Ann's flight lands at 9"))
      // Nothing was created in the working folder for the URI.
      #expect(!FileManager.default.fileExists(atPath: "postgresql:"))
    }
  }
}
