import EngramTestSupport
import Foundation
import Testing

/// `--user ID` / `$ENGRAM_USER` on every memory command, before or after the command name,
/// and `--db` / `$ENGRAM_DB` taking a PostgreSQL URI (issue 19), through the real binary.
@Suite(.timeLimit(.minutes(5)), .watchdog) struct UserOptionTests {
  @Test func usersAreKeptApartByOptionAndEnvironment() async throws {
    let scratch = try ScratchFolder()
    let db = try await offPoolInit(scratch)
    #expect(
      try await offPool("remember", "--db", db, "--user", "ann", "Ann keeps bees behind the greenhouse")
        .status == 0)
    #expect(
      try await offPool("--user", "bob", "--db", db, "remember", "Bob keeps goats on the hill").status == 0)
    #expect(try await offPool("remember", "--db", db, "Everyone shares the default memory").status == 0)

    let annQuery = try await offPool("query", "--db", db, "--user", "ann", "keeps goats bees default")
    #expect(annQuery.status == 0)
    #expect(annQuery.standardOutput.contains("bees") && !annQuery.standardOutput.contains("goats"))
    #expect(!annQuery.standardOutput.contains("default memory"))

    var environment = ScratchFolder.environment
    environment["ENGRAM_USER"] = "bob"
    environment["ENGRAM_DB"] = db
    let bobQuery = try await offPoolRun(["query", "keeps goats bees default"], environment: environment)
    #expect(bobQuery.status == 0)
    #expect(bobQuery.standardOutput.contains("goats") && !bobQuery.standardOutput.contains("bees"))
    // The option wins over the environment.
    let override = try await offPoolRun(
      ["query", "--user", "ann", "keeps goats bees"], environment: environment)
    #expect(override.standardOutput.contains("bees") && !override.standardOutput.contains("goats"))

    let defaultQuery = try await offPool("query", "--db", db, "keeps goats bees default")
    #expect(defaultQuery.standardOutput.contains("default memory"))
    #expect(!defaultQuery.standardOutput.contains("goats") && !defaultQuery.standardOutput.contains("bees"))

    let export = try await offPool("export", "--db", db, "--user", "bob")
    #expect(export.status == 0)
    #expect(export.standardOutput.contains("goats") && !export.standardOutput.contains("bees"))
    let stats = try await offPool("stats", "--db", db, "--user", "ann", "--json")
    #expect(stats.status == 0)
    #expect(
      stats.standardOutput.contains("\"memories\":1") || stats.standardOutput.contains("\"memories\": 1"))
  }

  @Test func badUsersAndUnavailableStoresAreClearErrors() async throws {
    let scratch = try ScratchFolder()
    let db = try await offPoolInit(scratch)
    let bad = try await offPool("query", "--db", db, "--user", "not a user", "bees")
    #expect(bad.status == 64)
    #expect(bad.standardError.contains("invalid user 'not a user'"))
    var environment = ScratchFolder.environment
    environment["ENGRAM_USER"] = "-x"
    let badEnvironment = try await offPoolRun(["stats", "--db", db], environment: environment)
    #expect(badEnvironment.status == 64)

    let uri = "postgresql://engram:s3cret@127.0.0.1:1/memory"
    let postgres = try await offPool("query", "--db", uri, "bees")
    #expect(postgres.status == 1)
    #expect(postgres.standardError.contains("PostgreSQL"))
    #expect(!postgres.standardError.contains("s3cret"))
    environment = ScratchFolder.environment
    environment["ENGRAM_DB"] = uri
    let fromEnvironment = try await offPoolRun(["stats"], environment: environment)
    #expect(fromEnvironment.status == 1)
    #expect(fromEnvironment.standardError.contains("PostgreSQL"))
    #expect(!FileManager.default.fileExists(atPath: uri))
  }
}

/// Runs the binary; its exit is awaited (``ChildProcess``), so waiting for it never holds a
/// thread of the cooperative pool (the HTTP transport tests of the same run need the pool).
func offPoolRun(_ arguments: [String], environment: [String: String]) async throws -> EngramBinary.Result {
  try await EngramBinary.run(arguments, environment: environment)
}

/// `engram ARGUMENTS...` with the test environment, off the cooperative pool.
func offPool(_ arguments: String...) async throws -> EngramBinary.Result {
  try await offPoolRun(arguments, environment: ScratchFolder.environment)
}

/// `ScratchFolder.initializedDatabase()`, off the cooperative pool.
func offPoolInit(_ scratch: ScratchFolder) async throws -> String {
  let path = scratch.path("memory.sqlite")
  let result = try await offPoolRun(
    ["init", "--db", path, "--model", "hashing"], environment: ScratchFolder.environment)
  guard result.status == 0 else { throw ScratchFolder.SetupError(message: result.standardError) }
  return path
}
