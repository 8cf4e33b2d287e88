import EngramPostgres
import EngramPostgresTestSupport
import EngramStore
import EngramTestSupport
import Foundation
import Synchronization
import Testing

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// The `engram` executable on PostgreSQL (a real server) killed with SIGKILL mid-ingest and
/// mid-compaction, and its server connections terminated during a run of writes: every write
/// the CLI acknowledged is there, nothing is half-stored, and the next command works.
/// Children are waited for on threads of their own, never on the cooperative pool.
@Suite(
  "Kills and lost connections on PostgreSQL", .serialized, .timeLimit(.minutes(soakEnabled ? 120 : 8)),
  .watchdog, .offPool)
struct PostgresKillTests {
  static let turnsPerFile = 160

  @Test func killedIngestStoresEachFileWhollyOrNotAtAll() async throws {
    try await withDatabase { url in
      let folder = try TemporaryFolder()
      let created = try await Self.run(["init", "--db", url, "--model", "hashing:64"], in: folder)
      try #require(created.status == 0, "engram init failed: \(created.error)")
      var acknowledged: Set<String> = []
      var names: [String] = []
      var span = 0
      var kills = 0
      var round = 0
      while kills < 4 && round < 24 {
        defer { round += 1 }
        var files: [String: String] = [:]
        for file in 0..<3 {
          let name = "r\(round)f\(file)"
          let path = folder.path(name + ".jsonl")
          try writeFile(
            CrashSafetyTests.conversation(name, turns: Self.turnsPerFile, daysAgo: 1), to: path)
          files[path] = name
          names.append(name)
        }
        let started = ContinuousClock.now
        let child = try CrashTestProcess(
          executable: "engram", arguments: ["ingest", "--db", url, "--json"] + files.keys.sorted(),
          folder: folder.url)
        if span == 0 {
          // The first run goes uncut and measures how long a run takes.
          let status = await child.wait()
          #expect(status == 0, "uncut ingest failed: \(child.standardError)")
          span = max(20, Int((child.lifetime ?? ContinuousClock.now - started) / .milliseconds(1)))
        } else {
          if await child.kill(afterMilliseconds: Int.random(in: 1...span)) {
            kills += 1
          } else {
            #expect(child.terminationStatus == 0, "ingest failed: \(child.standardError)")
            // The uncut run was timed under another load: aim earlier until kills land.
            span = max(5, span / 2)
          }
        }
        for line in CrashSafetyTests.ingestAcknowledgements(child.lines, files: files) {
          acknowledged.insert(String(line.split(separator: " ")[2]))
        }
        for name in names {
          let stored = try Self.count(
            url, "SELECT count(*) FROM messages WHERE content LIKE $1", [.text("\(name) turn-%")])
          #expect(
            stored == 0 || stored == Self.turnsPerFile,
            "round \(round): \(name) has \(stored) of \(Self.turnsPerFile) turns (a partial ingest)")
          if acknowledged.contains(name) {
            #expect(stored == Self.turnsPerFile, "round \(round): acknowledged \(name) has \(stored) turns")
          }
        }
        let orphans = try Self.count(
          url,
          "SELECT count(*) FROM sessions s WHERE NOT EXISTS (SELECT 1 FROM messages m WHERE m.session_id = s.id)"
        )
        #expect(orphans == 0, "round \(round): \(orphans) sessions without turns")
        // An ingest stopped between storing a file's text and embedding it is completed by
        // running it again (and adds no turn twice).
        let resumed = try await Self.run(["ingest", "--db", url] + files.keys.sorted(), in: folder)
        #expect(resumed.status == 0, "round \(round): the ingest run again: \(resumed.error)")
        let unembedded = try Self.count(
          url,
          "SELECT count(*) FROM messages m WHERE NOT EXISTS (SELECT 1 FROM embeddings e WHERE e.user_scope = m.user_scope AND e.owner_kind = 'message' AND e.owner_id = m.id)"
        )
        #expect(unembedded == 0, "round \(round): \(unembedded) turns without a vector")
        let doctor = try await Self.run(["doctor", "--db", url, "--json"], in: folder)
        #expect(doctor.status == 0, "round \(round): engram doctor: \(doctor.lines) \(doctor.error)")
      }
      #expect(kills == 4, "only \(kills) of \(round) runs were still going at the kill")
      let name = try #require(acknowledged.sorted().first)
      let query = try await Self.run(["query", "--db", url, "\(name) turn-7 climbing"], in: folder)
      #expect(query.status == 0 && query.lines.joined().contains("\(name) turn-"), "\(query.lines)")
    }
  }

  @Test func killedCompactionSummarizesEachSessionWhollyOrNotAtAll() async throws {
    try await withDatabase { url in
      let folder = try TemporaryFolder()
      let created = try await Self.run(["init", "--db", url, "--model", "hashing:64"], in: folder)
      try #require(created.status == 0, "engram init failed: \(created.error)")
      let turns = 60
      var sessions: [String] = []
      var span = 0
      var kills = 0
      var round = 0
      while kills < 4 && round < 24 {
        defer { round += 1 }
        // An old session and a duplicate memory, stored uncut, give every run work to do.
        let name = "c\(round)old"
        let path = folder.path(name + ".jsonl")
        try writeFile(CrashSafetyTests.conversation(name, turns: turns, daysAgo: 90), to: path)
        let ingested = try await Self.run(["ingest", "--db", url, path], in: folder)
        try #require(ingested.status == 0, "ingest failed: \(ingested.error)")
        sessions.append(name)
        let remembered = try await Self.run(
          ["remember", "--db", url, "duplicate fact \(round % 3): Alice climbs on Saturdays"], in: folder)
        try #require(remembered.status == 0, "remember failed: \(remembered.error)")

        let started = ContinuousClock.now
        let child = try CrashTestProcess(
          executable: "engram", arguments: ["compact", "--db", url, "--yes", "--json"], folder: folder.url)
        if span == 0 {
          let status = await child.wait()
          #expect(status == 0, "uncut compact failed: \(child.standardError)")
          span = max(20, Int((child.lifetime ?? ContinuousClock.now - started) / .milliseconds(1)))
        } else {
          if await child.kill(afterMilliseconds: Int.random(in: 1...span)) {
            kills += 1
          } else {
            #expect(child.terminationStatus == 0, "compact failed: \(child.standardError)")
            // The uncut run was timed under another load: aim earlier until kills land.
            span = max(5, span / 2)
          }
        }
        for session in sessions {
          let pattern = PostgresValue.text("\(session) turn-%")
          let stored = try Self.count(url, "SELECT count(*) FROM messages WHERE content LIKE $1", [pattern])
          let unsummarized = try Self.count(
            url, "SELECT count(*) FROM messages WHERE content LIKE $1 AND summary_id IS NULL", [pattern])
          // Untouched (every turn there, none summarized) or wholly summarized.
          #expect(
            (stored == turns && unsummarized == turns) || unsummarized == 0,
            "round \(round): \(session) has \(stored) turns, \(unsummarized) not summarized (a partial compaction)"
          )
        }
        for fact in 0..<min(round + 1, 3) {
          let copies = try Self.count(
            url, "SELECT count(*) FROM memories WHERE content LIKE $1",
            [.text("duplicate fact \(fact):%")])
          #expect(copies >= 1, "round \(round): every copy of duplicate fact \(fact) is gone")
        }
        let doctor = try await Self.run(["doctor", "--db", url, "--json"], in: folder)
        #expect(doctor.status == 0, "round \(round): engram doctor: \(doctor.lines) \(doctor.error)")
      }
      #expect(kills == 4, "only \(kills) of \(round) runs were still going at the kill")
      let finished = try await Self.run(["compact", "--db", url, "--yes", "--json"], in: folder)
      #expect(finished.status == 0, "compact after the kills: \(finished.error)")
      let unsummarized = try Self.count(url, "SELECT count(*) FROM messages WHERE summary_id IS NULL")
      #expect(unsummarized == 0, "\(unsummarized) old turns left unsummarized after an uncut compact")
      let query = try await Self.run(
        ["query", "--db", url, "--json", "--kind", "memory", "duplicate fact Alice climbs Saturdays"],
        in: folder)
      #expect(query.status == 0 && query.lines.joined().contains("Alice climbs on Saturdays"))
    }
  }

  /// `engram remember` in a loop while another connection terminates every backend of the
  /// database (what a server restart does to its clients): each run either fails with an
  /// error or stores its memory, every acknowledged memory is there once, and the next
  /// command works.
  @Test func terminatedConnectionsLoseNoAcknowledgedWrite() async throws {
    try await withDatabase { url in
      let folder = try TemporaryFolder()
      let created = try await Self.run(["init", "--db", url, "--model", "hashing:64"], in: folder)
      try #require(created.status == 0, "engram init failed: \(created.error)")
      let database = try Self.count(url, "SELECT 0")  // proves the URL connects
      #expect(database == 0)
      let name = try Self.string(url, "SELECT current_database()")
      let stop = Mutex(false)
      let terminated = Mutex(0)
      let serverURL = try PostgresTestServer.url()
      let terminator = Unchecked(
        Thread {
          guard let admin = try? PostgresConnection(url: serverURL) else { return }
          while !stop.withLock({ $0 }) {
            if let result = try? admin.execute(
              "SELECT count(*) FILTER (WHERE pg_terminate_backend(pid)) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()",
              [.text(name)]), let killed = try? result[0].int64(0)
            {
              terminated.withLock { $0 += Int(killed) }
            }
            usleep(UInt32.random(in: 20_000...120_000))
          }
        })
      terminator.value.start()
      var acknowledged: [Int] = []
      var failed = 0
      for fact in 0..<60 {
        let result = try await Self.run(
          ["remember", "--db", url, "restart fact \(fact): the backup runs at \(fact) past two"], in: folder)
        if result.status == 0 {
          acknowledged.append(fact)
        } else {
          failed += 1
          #expect(result.status == 1, "fact \(fact): exit \(result.status) \(result.error)")
          #expect(result.error.contains("PostgreSQL"), "fact \(fact): unclear error \(result.error)")
        }
      }
      stop.withLock { $0 = true }
      let killedBackends = terminated.withLock { $0 }
      #expect(killedBackends > 0, "no backend was terminated during the writes")
      for fact in acknowledged {
        let copies = try Self.count(
          url, "SELECT count(*) FROM memories WHERE content LIKE $1", [.text("restart fact \(fact):%")])
        #expect(copies == 1, "acknowledged fact \(fact) stored \(copies) times")
      }
      #expect(!acknowledged.isEmpty, "no write succeeded (\(failed) failed)")
      let after = try await Self.run(["remember", "--db", url, "written after the terminations"], in: folder)
      #expect(after.status == 0, "the next command failed: \(after.error)")
      let fact = try #require(acknowledged.last)
      let query = try await Self.run(["query", "--db", url, "backup runs at \(fact) past two"], in: folder)
      #expect(query.status == 0 && query.lines.joined().contains("restart fact \(fact):"), "\(query.lines)")
      let doctor = try await Self.run(["doctor", "--db", url, "--json"], in: folder)
      #expect(doctor.status == 0, "engram doctor: \(doctor.lines) \(doctor.error)")
      print(
        "pg-terminate: \(acknowledged.count) acknowledged, \(failed) failed, \(killedBackends) backends terminated"
      )
    }
  }

  // MARK: - Helpers

  /// A value sent to a thread that alone uses it.
  struct Unchecked<Value>: @unchecked Sendable {
    let value: Value
    init(_ value: Value) { self.value = value }
  }

  /// Runs `body` with the URL of a new, empty database on the test server.
  private func withDatabase(_ body: (String) async throws -> Void) async throws {
    let serverURL = try PostgresTestServer.url()
    let admin = try PostgresConnection(url: serverURL)
    let name = "engram_test_\(UInt64.random(in: 0...UInt64.max))"
    try admin.execute("CREATE DATABASE \(name)")
    defer { _ = try? admin.execute("DROP DATABASE IF EXISTS \(name) WITH (FORCE)") }
    try await body(PostgresTestServer.databaseURL(serverURL, database: name))
  }

  /// The integer `sql` returns, on a connection of its own.
  static func count(_ url: String, _ sql: String, _ parameters: [PostgresValue] = []) throws -> Int {
    let connection = try PostgresConnection(url: url)
    return Int(try connection.execute(sql, parameters)[0].int64(0) ?? -1)
  }

  static func string(_ url: String, _ sql: String) throws -> String {
    let connection = try PostgresConnection(url: url)
    return try connection.execute(sql)[0].string(0) ?? ""
  }

  /// Runs `engram ARGUMENTS` to completion.
  static func run(_ arguments: [String], in folder: TemporaryFolder) async throws -> CrashSafetyTests.CLIRun {
    let child = try CrashTestProcess(executable: "engram", arguments: arguments, folder: folder.url)
    let status = await child.wait()
    return CrashSafetyTests.CLIRun(status: status, lines: child.lines, error: child.standardError)
  }
}
