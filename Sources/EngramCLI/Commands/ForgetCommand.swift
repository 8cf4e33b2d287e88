import Engram
import Foundation

/// `engram forget ID | --query TEXT`: deletes an item, or the memories a query names.
public enum ForgetCommand: Command {
  /// The command's declaration.
  public static let configuration = CommandConfiguration(
    commandName: "forget", abstract: "Delete a memory by id, or the memories a query matches.",
    discussion: """
      Forgetting removes every copy and says what it removed (docs/forgetting.md):
      forgetting a turn deletes the summaries that cover or quote it (the next compact
      summarizes the session's other turns again); forgetting a memory also deletes the
      turns, summaries, agent trace steps and finished pending calls that contain its text
      (a turn is deleted whole). Ids are never reused: a forgotten id stays retired.

      Forgetting by query lists what matched and asks before deleting (answer y or n; a
      line on piped input works too), unless --yes is given. --dry-run only lists (by id,
      it also lists the copies that would go).
      """,
    usage: "ID | --query TEXT [--kind KIND] [--dry-run] [--yes] [--db PATH] [--json]")

  /// The command's options.
  public struct Options: ParsableOptions {
    @OptionGroup var database: DatabaseOptions
    @Option(valueName: "TEXT", help: "Forget the memories this text matches.") var query: String?
    @Option(help: "What the id names.") var kind = Target.memory
    @Flag(help: "List what would be forgotten; change nothing.") var dryRun = false
    @Flag(short: "y", help: "Do not ask for confirmation.") var yes = false
    @Flag(help: ArgumentHelp.json) var json = false
    @Argument(help: "The id to forget.") var id: Int?

    /// The defaults.
    public init() {}
  }

  /// What an id names (`--kind`), most likely first.
  enum Target: String, CaseIterable, ExpressibleByArgument {
    case memory, message, summary

    /// The item kind.
    var itemKind: ItemKind {
      switch self {
      case .memory: return .memory
      case .message: return .message
      case .summary: return .summary
      }
    }
  }

  /// The copies a report lists, as `; also removed ...` (empty when none).
  static func removedText(_ report: ForgetReport, dryRun: Bool) -> String {
    func ids(_ values: [Int64]) -> String { values.map { "#\($0)" }.joined(separator: ", ") }
    func count(_ number: Int, _ noun: String) -> String { "\(number) \(noun)\(number == 1 ? "" : "s")" }
    var parts: [String] = []
    if !report.turns.isEmpty { parts.append("\(count(report.turns.count, "turn")) (\(ids(report.turns)))") }
    if !report.summaries.isEmpty {
      parts.append(
        "\(report.summaries.count) \(report.summaries.count == 1 ? "summary" : "summaries") (\(ids(report.summaries)))"
      )
    }
    if report.traces > 0 { parts.append(count(report.traces, "trace step")) }
    if report.pendingCalls > 0 { parts.append(count(report.pendingCalls, "finished pending call")) }
    guard !parts.isEmpty else { return "" }
    return "; \(dryRun ? "would also remove" : "also removed") " + parts.joined(separator: ", ")
  }

  /// The copies a report lists, as JSON.
  static func removedJSON(_ report: ForgetReport) -> JSONValue {
    [
      "turns": .array(report.turns.map { .int(Int($0)) }),
      "summaries": .array(report.summaries.map { .int(Int($0)) }), "traces": .int(report.traces),
      "pending_calls": .int(report.pendingCalls),
    ]
  }

  /// Forgets and reports.
  public static func run(_ options: Options, context: CommandContext) async throws {
    let id = options.id
    let query = options.query
    switch (id, query) {
    case (nil, nil): throw UsageError("give an ID or --query TEXT")
    case (.some, .some): throw UsageError("give either an ID or --query TEXT, not both")
    default: break
    }
    let kind = options.kind.itemKind
    let json = options.json
    if let id {
      try await EngineAccess.withEngine(context) { engine in
        let dryRun = options.dryRun
        guard
          let report = try await engine.memories.forgetReporting(kind: kind, id: Int64(id), dryRun: dryRun)
        else {
          if dryRun {
            context.output.write("would forget \(kind.rawValue) #\(id) (not found)\n")
            return
          }
          throw CommandFailure("no \(kind.rawValue) with id \(id)")
        }
        if json {
          try context.jsonLines.write(
            [
              dryRun ? "would_forget" : "forgotten": [.int(id)], "kind": .string(kind.rawValue),
              "removed": Self.removedJSON(report),
            ] as JSONValue)
        } else {
          context.output.write(
            "\(dryRun ? "would forget" : "forgot") \(kind.rawValue) #\(id)\(Self.removedText(report, dryRun: dryRun))\n"
          )
        }
      }
      return
    }
    guard let query, !query.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty else {
      throw UsageError("the query text is empty")
    }
    let kinds: Set<ItemKind> = [kind]
    try await EngineAccess.withEngine(context) { engine in
      let matched = try await engine.memories.forget(matching: query, kinds: kinds, limit: 20, dryRun: true)
      guard !matched.isEmpty else {
        if json { try context.jsonLines.write(["forgotten": .array([])] as JSONValue) }
        context.error.write("nothing matches '\(query)'\n")
        return
      }
      if !json {
        context.output.write("matched \(matched.count):\n")
        for line in HitRendering.table(
          matched, width: context.terminal.width, styled: context.terminal.colorsOutput)
        {
          context.output.write(line + "\n")
        }
      }
      if options.dryRun {
        if json {
          try context.jsonLines.write(["would_forget": .array(matched.map { .int(Int($0.id)) })] as JSONValue)
        }
        return
      }
      if !options.yes && !context.confirm("Forget \(matched.count) item(s)? [y/N] ") {
        context.error.write("nothing forgotten\n")
        throw ExitCode.failure
      }
      var forgotten: [Int64] = []
      var copies: [String] = []
      for hit in matched {
        guard let report = try await engine.memories.forgetReporting(kind: hit.kind, id: hit.id) else {
          continue
        }
        forgotten.append(hit.id)
        if report.removedCopies { copies.append("#\(hit.id)\(Self.removedText(report, dryRun: false))") }
      }
      if json {
        try context.jsonLines.write(["forgotten": .array(forgotten.map { .int(Int($0)) })] as JSONValue)
      } else {
        context.output.write("forgot \(forgotten.count) item(s)\n")
        for line in copies { context.output.write("  \(line)\n") }
      }
    }
  }
}
