import Foundation
import Testing

/// `--user ID` / `$ENGRAM_USER` on every memory command, before or after the command name,
/// and `--db` / `$ENGRAM_DB` taking a PostgreSQL URI (issue 19), through the real binary.
@Suite struct UserOptionTests {
  @Test func usersAreKeptApartByOptionAndEnvironment() throws {
    let scratch = try ScratchFolder()
    let db = try scratch.initializedDatabase()
    #expect(
      try engram("remember", "--db", db, "--user", "ann", "Ann keeps bees behind the greenhouse").status == 0)
    #expect(try engram("--user", "bob", "--db", db, "remember", "Bob keeps goats on the hill").status == 0)
    #expect(try engram("remember", "--db", db, "Everyone shares the default memory").status == 0)

    let annQuery = try engram("query", "--db", db, "--user", "ann", "keeps goats bees default")
    #expect(annQuery.status == 0)
    #expect(annQuery.standardOutput.contains("bees") && !annQuery.standardOutput.contains("goats"))
    #expect(!annQuery.standardOutput.contains("default memory"))

    var environment = ScratchFolder.environment
    environment["ENGRAM_USER"] = "bob"
    environment["ENGRAM_DB"] = db
    let bobQuery = try EngramBinary.run(["query", "keeps goats bees default"], environment: environment)
    #expect(bobQuery.status == 0)
    #expect(bobQuery.standardOutput.contains("goats") && !bobQuery.standardOutput.contains("bees"))
    // The option wins over the environment.
    let override = try EngramBinary.run(
      ["query", "--user", "ann", "keeps goats bees"], environment: environment)
    #expect(override.standardOutput.contains("bees") && !override.standardOutput.contains("goats"))

    let defaultQuery = try engram("query", "--db", db, "keeps goats bees default")
    #expect(defaultQuery.standardOutput.contains("default memory"))
    #expect(!defaultQuery.standardOutput.contains("goats") && !defaultQuery.standardOutput.contains("bees"))

    let export = try engram("export", "--db", db, "--user", "bob")
    #expect(export.status == 0)
    #expect(export.standardOutput.contains("goats") && !export.standardOutput.contains("bees"))
    let stats = try engram("stats", "--db", db, "--user", "ann", "--json")
    #expect(stats.status == 0)
    #expect(
      stats.standardOutput.contains("\"memories\":1") || stats.standardOutput.contains("\"memories\": 1"))
  }

  @Test func badUsersAndUnavailableStoresAreClearErrors() throws {
    let scratch = try ScratchFolder()
    let db = try scratch.initializedDatabase()
    let bad = try engram("query", "--db", db, "--user", "not a user", "bees")
    #expect(bad.status == 64)
    #expect(bad.standardError.contains("invalid user 'not a user'"))
    var environment = ScratchFolder.environment
    environment["ENGRAM_USER"] = "-x"
    let badEnvironment = try EngramBinary.run(["stats", "--db", db], environment: environment)
    #expect(badEnvironment.status == 64)

    let uri = "postgresql://engram:s3cret@127.0.0.1:1/memory"
    let postgres = try engram("query", "--db", uri, "bees")
    #expect(postgres.status == 1)
    #expect(postgres.standardError.contains("PostgreSQL"))
    #expect(!postgres.standardError.contains("s3cret"))
    environment = ScratchFolder.environment
    environment["ENGRAM_DB"] = uri
    let fromEnvironment = try EngramBinary.run(["stats"], environment: environment)
    #expect(fromEnvironment.status == 1)
    #expect(fromEnvironment.standardError.contains("PostgreSQL"))
    #expect(!FileManager.default.fileExists(atPath: uri))
  }
}
