import Engram
import EngramEmbeddings
import EngramPostgres
import EngramStore
import Foundation
import Synchronization

/// `engram-bench locomo --db-url URL`: the same retrieval evaluation on the PostgreSQL store,
/// in the same run as the SQLite store. A new database is created on the server of `URL`
/// (the role needs CREATEDB) and dropped at the end; each conversation is one user of it,
/// so every search also runs through the user scoping.
extension LocomoSuite {
  /// Turns ingested into PostgreSQL and the seconds it took (embedding included).
  static let postgresIngest = Mutex<(turns: Int, seconds: Double)>((0, 0))

  /// A throwaway database on the server of `url`, and its URL.
  struct PostgresBenchDatabase {
    let admin: PostgresConnection
    let name: String
    let url: String

    init(serverURL: String) throws {
      admin = try PostgresConnection(url: serverURL)
      name = "engram_bench_\(getpid())_\(UInt32.random(in: 0...UInt32.max))"
      try admin.execute("CREATE DATABASE \(name)")
      let separator: String
      if serverURL.hasPrefix("postgresql://") || serverURL.hasPrefix("postgres://") {
        separator = serverURL.contains("?") ? "&" : "?"
        url = serverURL + separator + "dbname=\(name)"
      } else {
        url = serverURL + " dbname=\(name)"
      }
    }

    func drop() {
      _ = try? admin.execute("DROP DATABASE IF EXISTS \(name) WITH (FORCE)")
    }
  }

  /// Ingests `conversation` as user `user` of the PostgreSQL database and asks `questions`
  /// in every mode, adding to `tallies` and `latencies` as the SQLite pass does.
  static func evaluateOnPostgres(
    url: String, user: String, conversation: ConversationFile, path: String, questions: [Question],
    embedder: any Embedder, modes: [SearchMode], tallies: inout [SearchMode: Tally],
    latencies: inout [SearchMode: [Double]]
  ) async throws {
    var configuration = EngramConfiguration(embedder: embedder)
    configuration.user = user
    let engine = try MemoryEngine(location: try StoreLocation(parsing: url), configuration: configuration)
    defer { engine.close() }
    progress("locomo: ingesting \(path) into PostgreSQL as user \(user)")
    let start = ContinuousClock.now
    _ = try await engine.conversation.ingest(conversation, path: path, sessionPrefix: "")
    let seconds = (ContinuousClock.now - start).seconds
    postgresIngest.withLock { $0 = ($0.turns + conversation.turnCount, $0.seconds + seconds) }
    for mode in modes {
      for question in questions where question.category != 5 {
        let start = ContinuousClock.now
        let hits = try await engine.search(
          question.text, k: 10, mode: mode, filters: SearchFilters(kinds: [.message]), recordAccess: false)
        latencies[mode, default: []].append((ContinuousClock.now - start).seconds * 1000)
        let ranked = hits.map { Set([$0.metadata["dia_id"]?.stringValue].compactMap { $0 }) }
        tallies[mode, default: Tally()].add(ranked: ranked, evidence: question.evidence)
      }
    }
  }

  /// The PostgreSQL figures beside the SQLite ones.
  static func postgresReport(
    modes: [SearchMode], tallies: [SearchMode: Tally], latencies: [SearchMode: [Double]]
  ) -> BenchReport {
    var report = BenchReport()
    for mode in modes {
      var modeReport = tallies[mode, default: Tally()].report()
      modeReport["questions"] = nil
      modeReport.set("p50_ms", Measure.percentile(latencies[mode] ?? [], 0.5))
      modeReport.set("p95_ms", Measure.percentile(latencies[mode] ?? [], 0.95))
      report.set(mode.rawValue, modeReport)
    }
    let ingest = postgresIngest.withLock { $0 }
    report.set("ingest_turns_per_s", Double(ingest.turns) / max(ingest.seconds, 1e-9))
    return report
  }
}
