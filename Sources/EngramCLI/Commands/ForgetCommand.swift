import Engram
import Foundation

/// `engram forget ID | --query TEXT`: deletes an item, or the memories a query names.
public enum ForgetCommand: Command {
  /// The command's declaration.
  public static let configuration = CommandConfiguration(
    commandName: "forget", abstract: "Delete a memory by id, or the memories a query matches.",
    discussion: """
      Forgetting by query lists what matched and asks before deleting (answer y or n; a
      line on piped input works too), unless --yes is given. --dry-run only lists.
      """,
    usage: "ID | --query TEXT [--kind KIND] [--dry-run] [--yes] [--db PATH] [--json]",
    options: [
      .database,
      OptionSpec("query", valueName: "TEXT", help: "Forget the memories this text matches."),
      OptionSpec(
        "kind", kind: .choice(["memory", "message", "summary"]), help: "What the id names.",
        defaultDescription: "memory"),
      .flag("dry-run", help: "List what would be forgotten; change nothing."),
      .flag("yes", short: "y", help: "Do not ask for confirmation."),
      .json,
    ],
    positionals: [PositionalSpec("id", kind: .integer, optional: true, help: "The id to forget.")])

  /// Forgets and reports.
  public static func run(_ context: CommandContext) async throws {
    let arguments = context.arguments
    let id = arguments.integer("id")
    let query = arguments.string("query")
    switch (id, query) {
    case (nil, nil): throw UsageError("give an ID or --query TEXT")
    case (.some, .some): throw UsageError("give either an ID or --query TEXT, not both")
    default: break
    }
    let kind = ItemKind(rawValue: arguments.string("kind") ?? "memory") ?? .memory
    let json = arguments.flag("json")
    if let id {
      try await EngineAccess.withEngine(context) { engine in
        if arguments.flag("dry-run") {
          let exists = kind == .memory ? try engine.memory(Int64(id)) != nil : true
          context.output.write("would forget \(kind.rawValue) #\(id)\(exists ? "" : " (not found)")\n")
          return
        }
        guard try engine.forget(kind: kind, id: Int64(id)) else {
          throw CommandFailure("no \(kind.rawValue) with id \(id)")
        }
        if json {
          try context.jsonLines.write(["forgotten": [.int(id)], "kind": .string(kind.rawValue)] as JSONValue)
        } else {
          context.output.write("forgot \(kind.rawValue) #\(id)\n")
        }
      }
      return
    }
    guard let query, !query.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty else {
      throw UsageError("the query text is empty")
    }
    let kinds: Set<ItemKind> = arguments.string("kind") == nil ? [.memory] : [kind]
    try await EngineAccess.withEngine(context) { engine in
      let matched = try await engine.forget(matching: query, kinds: kinds, limit: 20, dryRun: true)
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
      if arguments.flag("dry-run") {
        if json {
          try context.jsonLines.write(["would_forget": .array(matched.map { .int(Int($0.id)) })] as JSONValue)
        }
        return
      }
      if !arguments.flag("yes") && !context.confirm("Forget \(matched.count) item(s)? [y/N] ") {
        context.error.write("nothing forgotten\n")
        throw ExitCode.failure
      }
      var forgotten: [Int64] = []
      for hit in matched where try engine.forget(kind: hit.kind, id: hit.id) {
        forgotten.append(hit.id)
      }
      if json {
        try context.jsonLines.write(["forgotten": .array(forgotten.map { .int(Int($0)) })] as JSONValue)
      } else {
        context.output.write("forgot \(forgotten.count) item(s)\n")
      }
    }
  }
}
