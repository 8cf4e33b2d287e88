import Engram
import EngramMCP
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
    let stats = try await EngineAccess.withEngine(context, mode: .readOnly) { engine in
      try await EngineJSON.stats(engine)
    }
    if options.json {
      try context.jsonLines.write(stats)
    } else {
      for line in lines(stats) { context.output.write(line + "\n") }
    }
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
