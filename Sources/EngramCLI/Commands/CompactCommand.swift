import Engram
import Foundation

/// `engram compact`: summarizes old conversation, merges near-duplicate memories, shrinks the file.
public enum CompactCommand: Command {
  /// The command's declaration.
  public static let configuration = CommandConfiguration(
    commandName: "compact", abstract: "Summarize old conversation and shrink the memory.",
    discussion: """
      Prints the plan first and asks before changing anything (--yes skips the question;
      without a terminal, --yes is required). Summaries stay searchable; kept turns' vectors
      are stored as int8.
      """)

  /// The command's options.
  public struct Options: ParsableOptions {
    @OptionGroup var database: DatabaseOptions
    @Flag(help: "Print the plan; change nothing.") var dryRun = false
    @Option(valueName: "AGE", help: "Only conversation older than this.") var olderThan = TimeSpan.days(30)
    @Flag(short: "y", help: "Do not ask for confirmation.") var yes = false
    @Flag(help: ArgumentHelp.json) var json = false

    /// The defaults.
    public init() {}
  }

  /// Plans, confirms, compacts and reports.
  public static func run(_ options: Options, context: CommandContext) async throws {
    let olderThan = options.olderThan.seconds
    let json = options.json
    // A dry run only plans: it opens read-only and writes nothing.
    let mode: EngineAccess.Mode = options.dryRun ? .readOnly : .readWrite
    try await EngineAccess.withEngine(context, mode: mode) { engine in
      let plan = try await engine.compact(olderThan: olderThan, dryRun: true)
      if !json {
        if plan.plan.isEmpty {
          context.output.write(
            "nothing to compact (no conversation older than \(DurationParser.format(olderThan)))\n")
        } else {
          context.output.write("plan:\n" + plan.plan.map { "  " + $0 + "\n" }.joined())
        }
      }
      if options.dryRun {
        if json { try context.jsonLines.write(reportJSON(plan)) }
        return
      }
      if !plan.plan.isEmpty && !options.yes {
        guard context.terminal.isInputTerminal else {
          throw CommandFailure("compact changes the memory; run it from a terminal or pass --yes")
        }
        guard context.confirm("Compact now? [y/N] ") else {
          context.error.write("nothing changed\n")
          throw ExitCode.failure
        }
      }
      let report = try await engine.compact(olderThan: olderThan, dryRun: false)
      if json {
        try context.jsonLines.write(reportJSON(report))
        return
      }
      for line in summary(report) { context.output.write(line + "\n") }
    }
  }

  /// Lines describing what compaction did: rows per table and bytes, before and after.
  static func summary(_ report: CompactionReport) -> [String] {
    var lines = [
      "summaries created \(report.summariesCreated), turns deleted \(report.turnsDeleted), "
        + "vectors quantized \(report.embeddingsQuantized), memories merged \(report.memoriesMerged)"
    ]
    var table = Table(columns: [
      .init("table"), .init("before", alignment: .right), .init("after", alignment: .right),
    ])
    for name in report.rowsBefore.keys.sorted() {
      table.append([name, String(report.rowsBefore[name] ?? 0), String(report.rowsAfter[name] ?? 0)])
    }
    table.append(["bytes", HitRendering.bytes(report.bytesBefore), HitRendering.bytes(report.bytesAfter)])
    lines += table.render(width: 80)
    return lines
  }

  static func reportJSON(_ report: CompactionReport) -> JSONValue {
    let rows = { (counts: [String: Int]) -> JSONValue in .object(counts.mapValues { .int($0) }) }
    return [
      "dry_run": .bool(report.dryRun), "plan": .array(report.plan.map { .string($0) }),
      "sessions_summarized": .int(report.sessionsSummarized),
      "summaries_created": .int(report.summariesCreated),
      "turns_deleted": .int(report.turnsDeleted), "embeddings_quantized": .int(report.embeddingsQuantized),
      "memories_merged": .int(report.memoriesMerged), "rows_before": rows(report.rowsBefore),
      "rows_after": rows(report.rowsAfter), "bytes_before": .int(report.bytesBefore),
      "bytes_after": .int(report.bytesAfter),
    ]
  }
}
