import Engram
import EngramCore
import Foundation

/// The engine's results as JSON, as the MCP tools return them and `engram query --json`,
/// `engram stats --json` and the web app print them.
public enum EngineJSON {
  /// ISO 8601 with seconds, UTC (machine output: stable across machines).
  public static func isoDate(_ date: Date) -> String {
    DateParser.iso8601(date, timeZone: TimeZone(secondsFromGMT: 0)!)
  }

  /// One hit as a JSON object (the `query --json` line format, `memory_search`'s hits).
  public static func hit(_ hit: SearchHit) -> JSONValue {
    [
      "id": .int(Int(hit.id)), "kind": .string(hit.kind.rawValue), "score": .double(hit.score),
      "bm25": hit.bm25.map { .double($0) } ?? .null, "cosine": hit.cosine.map { .double($0) } ?? .null,
      "date": .string(isoDate(hit.timestamp)), "session": hit.sessionID.map { .int(Int($0)) } ?? .null,
      "speaker": hit.speaker.map { .string($0) } ?? .null, "text": .string(hit.text),
      "provenance": .array(hit.provenance.map { .string($0) }),
    ]
  }

  /// The memory's statistics as one JSON object (`engram stats --json`, `memory_stats`).
  /// - Throws: store errors.
  public static func stats(_ engine: MemoryEngine) async throws -> JSONValue {
    let counts = try await engine.maintenance.tableCounts()
    let kinds = try await engine.maintenance.memoryCountsByKind()
    let index = engine.maintenance.vectorIndexStatistics
    let lastCompaction = try await engine.maintenance.metaValue("last_compaction").flatMap(Int64.init).map {
      JSONValue.string(isoDate(Date(timeIntervalSince1970: Double($0) / 1000)))
    }
    let spec = try await engine.maintenance.metaValue(EmbedderSpec.metaKey)
    return [
      "path": .string(engine.path),
      "sessions": .int(counts["sessions"] ?? 0), "messages": .int(counts["messages"] ?? 0),
      "summaries": .int(counts["summaries"] ?? 0), "memories": .int(counts["memories"] ?? 0),
      "embeddings": .int(counts["embeddings"] ?? 0),
      "memories_by_kind": .object(
        Dictionary(uniqueKeysWithValues: MemoryKind.allCases.map { ($0.rawValue, .int(kinds[$0] ?? 0)) })),
      "bytes": .int(engine.maintenance.databaseBytes()),
      "embedder_spec": spec.map { .string($0) } ?? .null,
      "model": .string(engine.embedder.modelID), "dimension": .int(engine.embedder.dimension),
      "index_rows": .int(index.rows), "index_tombstones": .int(index.tombstones),
      "index_bytes": .int(index.bytes),
      "index_tier": .string(index.approximate?.serving == true ? "approximate" : "exact"),
      "index_calibrated_recall": index.approximate.map { .double($0.calibratedRecall) } ?? .null,
      "index_lists": index.approximate.map { .int($0.lists) } ?? .null,
      "index_probes": index.approximate.map { .int($0.probes) } ?? .null,
      "last_compaction": lastCompaction ?? .null,
    ]
  }
}
