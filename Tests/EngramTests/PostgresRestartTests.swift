import EngramCore
import EngramPostgres
import EngramPostgresTestSupport
import EngramStore
import EngramTestSupport
import Foundation
import Synchronization
import Testing

@testable import Engram

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// A real PostgreSQL restart (`pg_ctl restart -m fast` and `-m immediate`) of a cluster this
/// suite owns, during runs of `engram ingest` and `engram remember`: no acknowledged write is
/// lost, no ingest is left half-stored, and the next command works; an engine opened before
/// a restart searches again after it (it reconnects).
@Suite("PostgreSQL restarts", .serialized, .timeLimit(.minutes(soakEnabled ? 120 : 8)), .watchdog, .offPool)
struct PostgresRestartTests {
  /// A cluster of its own from scripts/postgres.sh (the shared test server is not
  /// restarted under the other suites), removed at the end.
  final class OwnCluster: Sendable {
    let folder: String
    let url: String
    /// scripts/postgres.sh (this file is Tests/EngramTests/PostgresRestartTests.swift).
    static let scriptPath = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
      .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("scripts/postgres.sh")
      .path

    struct ScriptFailed: Error, CustomStringConvertible {
      var description: String
    }

    init() throws {
      let output = try Self.script(["start"])
      let lines = output.split(separator: "\n").map(String.init)
      try #require(lines.count == 2, "scripts/postgres.sh start printed \(output)")
      folder = lines[0]
      url = lines[1]
      // The script's clusters acknowledge a commit before its WAL leaves shared memory
      // (synchronous_commit=off), which an immediate shutdown may then lose: the server
      // would lose acknowledged writes, whatever the client does. A per-database setting
      // overrides the command line's.
      try PostgresConnection(url: url).execute("ALTER DATABASE postgres SET synchronous_commit = on")
    }

    deinit { _ = try? Self.script(["stop", folder]) }

    /// `pg_ctl restart -m MODE`, back when it accepts connections.
    func restart(_ mode: String) throws { _ = try Self.script(["restart", folder, mode]) }

    /// Runs scripts/postgres.sh with `arguments`; returns what it printed. `popen`, not
    /// `Process`: the server the script leaves running must not hold a pipe this process
    /// waits on, and the child is reaped by `pclose` on this thread.
    @discardableResult
    static func script(_ arguments: [String]) throws -> String {
      let command =
        "ENGRAM_PG_OWNER=\(getpid()) " + ([scriptPath] + arguments).map { "'\($0)'" }.joined(separator: " ")
        + " 2>/dev/null"
      guard let pipe = popen(command, "r") else {
        throw ScriptFailed(description: "popen failed (errno \(errno))")
      }
      var text = ""
      var buffer = [CChar](repeating: 0, count: 4096)
      while fgets(&buffer, Int32(buffer.count), pipe) != nil {
        text += buffer.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
      }
      let status = pclose(pipe)
      guard status == 0 else {
        throw ScriptFailed(
          description: "scripts/postgres.sh \(arguments.joined(separator: " ")) exited \(status)")
      }
      return text
    }
  }

  /// Restarts `cluster` on a thread of its own after each delay, alternating fast and
  /// immediate; returns how many restarts were done.
  static func restarting(_ cluster: OwnCluster, after delays: [Int]) async -> Int {
    let box = PostgresKillTests.Unchecked(cluster)
    return await withCheckedContinuation { continuation in
      Thread {
        var done = 0
        for (index, delay) in delays.enumerated() {
          usleep(UInt32(delay) * 1000)
          if (try? box.value.restart(index % 2 == 0 ? "immediate" : "fast")) != nil { done += 1 }
        }
        continuation.resume(returning: done)
      }.start()
    }
  }

  @Test func restartsDuringIngestsLoseNoAcknowledgedFileAndLeaveNoneHalfStored() async throws {
    let cluster = try await BlockingWork.run { try OwnCluster() }
    let url = cluster.url
    let folder = try TemporaryFolder()
    let created = try await PostgresKillTests.run(["init", "--db", url, "--model", "hashing:64"], in: folder)
    try #require(created.status == 0, "engram init failed: \(created.error)")
    let turns = PostgresKillTests.turnsPerFile
    var acknowledged: Set<String> = []
    var names: [String] = []
    var failed = 0
    var restarts = 0
    for round in 0..<6 {
      var files: [String: String] = [:]
      for file in 0..<2 {
        let name = "restart\(round)f\(file)"
        let path = folder.path(name + ".jsonl")
        try writeFile(CrashSafetyTests.conversation(name, turns: turns, daysAgo: 1), to: path)
        files[path] = name
        names.append(name)
      }
      let child = try CrashTestProcess(
        executable: "engram", arguments: ["ingest", "--db", url, "--json"] + files.keys.sorted(),
        folder: folder.url)
      // A restart at some point of the run (or just after it, for a run quicker than that).
      // The last round's restart comes after the run: at least one run goes uncut.
      if round == 5 { _ = await child.wait() }
      restarts += await Self.restarting(cluster, after: [Int.random(in: 5...1_500)])
      let status = await child.wait()
      if status != 0 {
        failed += 1
        #expect(child.standardError.contains("PostgreSQL"), "unclear error: \(child.standardError)")
      }
      for line in CrashSafetyTests.ingestAcknowledgements(child.lines, files: files) {
        acknowledged.insert(String(line.split(separator: " ")[2]))
      }
      for name in names {
        let stored = try PostgresKillTests.count(
          url, "SELECT count(*) FROM messages WHERE content LIKE $1", [.text("\(name) turn-%")])
        #expect(stored == 0 || stored == turns, "round \(round): \(name) has \(stored) of \(turns) turns")
        if acknowledged.contains(name) {
          #expect(stored == turns, "round \(round): acknowledged \(name) has \(stored) turns")
        }
      }
      // An ingest the restart stopped between a file's text and its embeddings is completed
      // by running it again.
      if status != 0 {
        let resumed = try await PostgresKillTests.run(
          ["ingest", "--db", url] + files.keys.sorted(), in: folder)
        #expect(resumed.status == 0, "round \(round): the ingest run again: \(resumed.error)")
      }
      let unembedded = try PostgresKillTests.count(
        url,
        "SELECT count(*) FROM messages m WHERE NOT EXISTS (SELECT 1 FROM embeddings e WHERE e.user_scope = m.user_scope AND e.owner_kind = 'message' AND e.owner_id = m.id)"
      )
      #expect(unembedded == 0, "round \(round): \(unembedded) turns without a vector")
    }
    #expect(restarts == 6)
    #expect(!acknowledged.isEmpty, "no ingest succeeded")
    // The next command after the restarts works, and finds what was acknowledged.
    let doctor = try await PostgresKillTests.run(["doctor", "--db", url, "--json"], in: folder)
    #expect(doctor.status == 0, "engram doctor: \(doctor.lines) \(doctor.error)")
    if let name = acknowledged.sorted().first {
      let query = try await PostgresKillTests.run(
        ["query", "--db", url, "\(name) turn-7 climbing"], in: folder)
      #expect(query.status == 0 && query.lines.joined().contains("\(name) turn-"), "\(query.lines)")
    }
    print(
      "pg-restart ingest: \(acknowledged.count) files acknowledged, \(failed) runs failed, \(restarts) restarts"
    )
  }

  @Test func restartsDuringRemembersLoseNoAcknowledgedWriteAndTheEngineReconnects() async throws {
    let cluster = try await BlockingWork.run { try OwnCluster() }
    let url = cluster.url
    let folder = try TemporaryFolder()
    let created = try await PostgresKillTests.run(["init", "--db", url, "--model", "hashing:64"], in: folder)
    try #require(created.status == 0, "engram init failed: \(created.error)")
    // An engine opened before the restarts (a long-lived server's).
    let engine = try MemoryEngine(
      location: try StoreLocation(parsing: url), configuration: hashingConfiguration(dimension: 64))
    defer { engine.close() }
    _ = try await engine.memories.remember("The spare key is under the blue pot", kind: .fact)
    #expect(try await engine.search("spare key", k: 1, recordAccess: false).count == 1)

    let finished = Mutex(false)
    let restarter = Task {
      let done = await Self.restarting(cluster, after: (0..<8).map { _ in Int.random(in: 100...300) })
      finished.withLock { $0 = true }
      return done
    }
    var acknowledged: [Int] = []
    var failed = 0
    var fact = 0
    while fact < 40 || !finished.withLock({ $0 }) {
      let result = try await PostgresKillTests.run(
        ["remember", "--db", url, "restart fact \(fact): the backup runs at \(fact) past two"], in: folder)
      if result.status == 0 {
        acknowledged.append(fact)
      } else {
        failed += 1
        #expect(result.error.contains("PostgreSQL"), "fact \(fact): unclear error \(result.error)")
      }
      fact += 1
    }
    let restarts = await restarter.value
    #expect(restarts == 8)
    for fact in acknowledged {
      let copies = try PostgresKillTests.count(
        url, "SELECT count(*) FROM memories WHERE content LIKE $1", [.text("restart fact \(fact):%")])
      #expect(copies == 1, "acknowledged fact \(fact) stored \(copies) times")
    }
    #expect(!acknowledged.isEmpty, "no write succeeded (\(failed) failed)")
    let after = try await PostgresKillTests.run(
      ["remember", "--db", url, "written after the restarts"], in: folder)
    #expect(after.status == 0, "the next command failed: \(after.error)")
    // The engine opened before the restarts searches and writes again, first time.
    let hits = try await engine.search("spare key", k: 1, recordAccess: false)
    #expect(hits.first?.text == "The spare key is under the blue pot")
    _ = try await engine.memories.remember("The boiler was serviced in May", kind: .fact)
    let found = try await engine.search("backup runs past two", k: 50, mode: .keyword, recordAccess: false)
    #expect(Set(acknowledged).isSubset(of: Set(found.compactMap { Self.factNumber($0.text) })))
    print("pg-restart remember: \(acknowledged.count) acknowledged, \(failed) failed, \(restarts) restarts")
  }

  static func factNumber(_ text: String) -> Int? {
    guard text.hasPrefix("restart fact ") else { return nil }
    return Int(text.dropFirst("restart fact ".count).prefix { $0.isNumber })
  }
}
