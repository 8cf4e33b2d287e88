import Engram
import Foundation

/// `engram bench`: retrieval latency on the user's own memory.
public enum BenchCommand: Command {
  /// The command's declaration.
  public static let configuration = CommandConfiguration(
    commandName: "bench", abstract: "Time hybrid search on your own memory (p50/p95).",
    discussion: "Uses up to 50 of your most recent turns (or memories) as queries.")

  /// The command's options.
  public struct Options: ParsableOptions {
    @OptionGroup var database: DatabaseOptions
    @OptionGroup var precision: PrecisionOptions
    @Option(short: "k", valueName: "N", help: "Hits per query.") var limit = 10
    @Flag(help: ArgumentHelp.json) var json = false

    /// The defaults.
    public init() {}
  }

  /// Runs the queries and prints percentiles.
  public static func run(_ options: Options, context: CommandContext) async throws {
    let k = options.limit
    guard k >= 1 else {
      throw UsageError(.invalidValue(argument: "-k", value: String(k), expected: "an integer >= 1"))
    }
    let (queries, times) = try await EngineAccess.withEngine(context, mode: .readOnly) {
      engine -> ([String], [Double]) in
      var queries = try await engine.conversation.recentTurns(limit: 50).map(\.text)
      if queries.isEmpty { queries = try await engine.memories.list(limit: 50).map(\.content) }
      queries = queries.filter { !$0.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty }
      guard !queries.isEmpty else {
        throw CommandFailure("nothing to time: the memory is empty (ingest a conversation first)")
      }
      // One warm-up query loads pages and the model's weights.
      _ = try await engine.search(queries[0], k: k, recordAccess: false)
      var times: [Double] = []
      let clock = ContinuousClock()
      for query in queries {
        let elapsed = try await clock.measure {
          _ = try await engine.search(query, k: k, recordAccess: false)
        }
        times.append(
          Double(elapsed.components.attoseconds) / 1e15 + Double(elapsed.components.seconds) * 1000)
      }
      return (queries, times)
    }
    let sorted = times.sorted()
    let percentile = { (p: Double) in
      sorted[min(sorted.count - 1, Int((p * Double(sorted.count - 1)).rounded()))]
    }
    let p50 = percentile(0.5)
    let p95 = percentile(0.95)
    if options.json {
      try context.jsonLines.write(
        [
          "queries": .int(queries.count), "k": .int(k), "mode": "hybrid", "p50_ms": .double(p50),
          "p95_ms": .double(p95),
        ] as JSONValue)
    } else {
      context.output.write(
        String(format: "%d hybrid queries (k=%d): p50 %.2f ms, p95 %.2f ms\n", queries.count, k, p50, p95))
    }
  }
}
