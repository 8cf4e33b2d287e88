import Engram
import Foundation

/// `engram stats`: what the memory holds and how big it is.
public enum StatsCommand: Command {
  /// The command's declaration.
  public static let configuration = CommandConfiguration(
    commandName: "stats", abstract: "Show counts, size, embedder and the last compaction.")

  /// The command's options.
  public struct Options: ParsableOptions {
    @OptionGroup var database: DatabaseOptions
    @Flag(help: ArgumentHelp.json) var json = false

    /// The defaults.
    public init() {}
  }

  /// Prints the statistics.
  public static func run(_ options: Options, context: CommandContext) async throws {
    let stats = try await EngineAccess.withEngine(context, mode: .readOnly) { engine in try collect(engine) }
    if options.json {
      try context.jsonLines.write(stats)
    } else {
      for line in lines(stats) { context.output.write(line + "\n") }
    }
  }

  /// The statistics as one JSON object.
  static func collect(_ engine: MemoryEngine) throws -> JSONValue {
    let counts = try engine.maintenance.tableCounts()
    let kinds = try engine.maintenance.memoryCountsByKind()
    let index = engine.maintenance.vectorIndexStatistics
    let lastCompaction = try engine.maintenance.metaValue("last_compaction").flatMap(Int64.init).map {
      JSONValue.string(HitRendering.isoDate(Date(timeIntervalSince1970: Double($0) / 1000)))
    }
    return [
      "path": .string(engine.path),
      "sessions": .int(counts["sessions"] ?? 0), "messages": .int(counts["messages"] ?? 0),
      "summaries": .int(counts["summaries"] ?? 0), "memories": .int(counts["memories"] ?? 0),
      "embeddings": .int(counts["embeddings"] ?? 0),
      "memories_by_kind": .object(
        Dictionary(uniqueKeysWithValues: MemoryKind.allCases.map { ($0.rawValue, .int(kinds[$0] ?? 0)) })),
      "bytes": .int(engine.maintenance.databaseBytes()),
      "embedder_spec": try engine.maintenance.metaValue(EmbedderSpec.metaKey).map { .string($0) } ?? .null,
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

  /// Which index serves searches: the exact scan, or the approximate lists with their
  /// calibrated recall.
  static func tierLine(_ stats: JSONValue) -> String {
    guard stats["index_tier"]?.stringValue == "approximate",
      let recall = stats["index_calibrated_recall"]?.doubleValue
    else { return "exact scan" }
    let lists = stats["index_lists"]?.intValue ?? 0
    let probes = stats["index_probes"]?.intValue ?? 0
    return "approximate (\(lists) lists, \(probes) probed, calibrated recall@10 "
      + String(format: "%.3f", recall) + "; --exact scans all)"
  }

  /// The statistics as aligned lines.
  static func lines(_ stats: JSONValue) -> [String] {
    let int = { (key: String) in stats[key]?.intValue ?? 0 }
    let kinds = MemoryKind.allCases.compactMap { kind -> String? in
      let count = stats["memories_by_kind"]?[kind.rawValue]?.intValue ?? 0
      return count > 0 ? "\(count) \(kind.rawValue)" : nil
    }
    var table = Table(columns: [.init("what"), .init("value")])
    table.rows = [
      ["memory", stats["path"]?.stringValue ?? ""],
      ["sessions", String(int("sessions"))],
      ["turns", String(int("messages"))],
      ["summaries", String(int("summaries"))],
      [
        "memories",
        String(int("memories")) + (kinds.isEmpty ? "" : " (" + kinds.joined(separator: ", ") + ")"),
      ],
      ["embeddings", String(int("embeddings"))],
      ["size on disk", HitRendering.bytes(int("bytes"))],
      [
        "embedder",
        "\(stats["model"]?.stringValue ?? "?") (\(int("dimension"))-d, spec \(stats["embedder_spec"]?.stringValue ?? "-"))",
      ],
      ["vector index", "\(int("index_rows")) rows, \(HitRendering.bytes(int("index_bytes")))"],
      ["search", Self.tierLine(stats)],
      ["last compaction", stats["last_compaction"]?.stringValue ?? "never"],
    ]
    return table.render(width: 200, showsHeader: false)
  }
}
