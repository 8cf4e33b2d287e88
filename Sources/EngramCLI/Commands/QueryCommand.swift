import Engram
import Foundation

/// `engram query TEXT`: searches the memory.
public enum QueryCommand: Command {
  /// The command's declaration.
  public static let configuration = CommandConfiguration(
    commandName: "query", abstract: "Search the memory (hybrid keyword + vector by default).",
    options: [
      .database,
      OptionSpec(
        "limit", short: "k", kind: .integer, valueName: "N", help: "How many hits.", defaultDescription: "10"),
      OptionSpec(
        "mode", kind: .choice(SearchMode.allCases.map(\.rawValue)), help: "How to rank.",
        defaultDescription: "hybrid"),
      OptionSpec(
        "kind", kind: .choice(ItemKind.allCases.map(\.rawValue)), repeating: true,
        help: "Only items of this kind."),
      OptionSpec("session", valueName: "NAME", help: "Only items of this session (name or id)."),
      OptionSpec("since", kind: .date, valueName: "DATE", help: "Only items at or after this date."),
      OptionSpec(
        "until", kind: .date, valueName: "DATE",
        help: "Only items up to this date (a day includes all of it)."),
      .flag("exact", help: "Scan every vector even when the approximate index serves."),
      .json,
    ],
    positionals: [PositionalSpec("text", repeating: true, help: "What to look for (words are joined).")])

  /// Searches and prints a table or JSON lines.
  public static func run(_ context: CommandContext) async throws {
    let arguments = context.arguments
    let text = arguments.strings("text").joined(separator: " ")
    guard !text.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty else {
      throw UsageError("the query text is empty")
    }
    let k = arguments.integer("limit") ?? 10
    guard k >= 1 else {
      throw UsageError(.invalidValue(argument: "-k", value: String(k), expected: "an integer >= 1"))
    }
    let mode = SearchMode(rawValue: arguments.string("mode") ?? "hybrid") ?? .hybrid
    let filters = SearchFilters(
      kinds: Set(arguments.strings("kind").compactMap(ItemKind.init(rawValue:))),
      session: arguments.string("session"),
      since: arguments.date("since")?.date, until: arguments.date("until")?.end)
    if let since = filters.since, let until = filters.until, since >= until {
      throw UsageError("--since must come before --until")
    }
    let hits = try await EngineAccess.withEngine(context, mode: .readOnly) { engine in
      try await engine.search(text, k: k, mode: mode, filters: filters, exact: arguments.flag("exact"))
    }
    if arguments.flag("json") {
      for hit in hits { try context.jsonLines.write(HitRendering.json(hit)) }
      return
    }
    guard !hits.isEmpty else {
      context.error.write("no matches\n")
      return
    }
    for line in HitRendering.table(hits, width: context.terminal.width, styled: context.terminal.colorsOutput)
    {
      context.output.write(line + "\n")
    }
  }
}
