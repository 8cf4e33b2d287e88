import Engram
import EngramMCP
import Foundation

/// `engram query TEXT`: searches the memory.
public enum QueryCommand: Command {
  /// The command's declaration.
  public static let configuration = CommandConfiguration(
    commandName: "query", abstract: "Search the memory (hybrid keyword + vector by default).")

  /// The command's options.
  public struct Options: ParsableOptions {
    @OptionGroup var database: DatabaseOptions
    @OptionGroup var precision: PrecisionOptions
    @Option(short: "k", valueName: "N", help: "How many hits.") var limit = 10
    @Option(help: "How to rank.") var mode = SearchMode.hybrid
    @Option(help: "Only items of this kind.") var kind: [ItemKind] = []
    @Option(valueName: "NAME", help: "Only items of this session (name or id).") var session: String?
    @Option(valueName: "DATE", help: "Only items at or after this date.") var since: ParsedDate?
    @Option(valueName: "DATE", help: "Only items up to this date (a day includes all of it).")
    var until: ParsedDate?
    @Flag(help: "Scan every vector even when the approximate index serves.") var exact = false
    @Flag(help: ArgumentHelp.json) var json = false
    @Argument(help: "What to look for (words are joined).") var text: [String]

    /// The defaults.
    public init() {}
  }

  /// Searches and prints a table or JSON lines.
  public static func run(_ options: Options, context: CommandContext) async throws {
    let text = options.text.joined(separator: " ")
    guard !text.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty else {
      throw UsageError("the query text is empty")
    }
    let k = options.limit
    guard k >= 1 else {
      throw UsageError(.invalidValue(argument: "-k", value: String(k), expected: "an integer >= 1"))
    }
    let mode = options.mode
    let filters = SearchFilters(
      kinds: Set(options.kind), session: options.session, since: options.since?.date,
      until: options.until?.end)
    if let since = filters.since, let until = filters.until, since >= until {
      throw UsageError("--since must come before --until")
    }
    let (hits, missingSnapshot, damagedSnapshot) = try await EngineAccess.withEngine(context, mode: .readOnly)
    {
      engine in
      (
        try await engine.search(text, k: k, mode: mode, filters: filters, exact: options.exact),
        engine.isMissingSnapshot, engine.foundDamagedSnapshot
      )
    }
    if damagedSnapshot {
      // Answered from the table; the file stays as it is until a writer replaces it.
      context.error.write(
        "note: this memory's vector snapshot is damaged, so this search read every vector from the "
          + "database; `engram doctor --repair` (or any write) saves a sound one\n")
    } else if missingSnapshot && mode != .keyword {
      // A read command writes nothing: say once per query how to get the fast search back (a
      // keyword search reads no vector).
      context.error.write(
        "note: this memory has no current vector snapshot, so every search by meaning reads all its "
          + "vectors from the database; `engram doctor --repair` (or any write) saves one\n")
    }
    if options.json {
      for hit in hits { try context.jsonLines.write(EngineJSON.hit(hit)) }
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
