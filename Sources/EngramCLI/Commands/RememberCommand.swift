import Engram
import Foundation

/// `engram remember TEXT`: stores a memory.
public enum RememberCommand: Command {
  /// The command's declaration.
  public static let configuration = CommandConfiguration(
    commandName: "remember", abstract: "Store a memory (a fact, preference, note or event).",
    options: [
      .database,
      OptionSpec(
        "kind", kind: .choice(["fact", "preference", "note", "event"]), help: "What the memory is.",
        defaultDescription: "fact"),
      OptionSpec(
        "importance", kind: .double, valueName: "0..1", help: "How much it matters.",
        defaultDescription: "0.5"),
      OptionSpec("tag", valueName: "TAG", repeating: true, help: "A tag to file it under."),
      .json,
    ],
    positionals: [PositionalSpec("text", repeating: true, help: "What to remember (words are joined).")])

  /// Stores the memory and prints its id.
  public static func run(_ context: CommandContext) async throws {
    let text = context.arguments.strings("text").joined(separator: " ")
    guard !text.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty else {
      throw UsageError("the text to remember is empty")
    }
    let kind = MemoryKind(rawValue: context.arguments.string("kind") ?? "fact") ?? .fact
    let importance = context.arguments.double("importance") ?? 0.5
    guard (0...1).contains(importance) else {
      throw UsageError(
        .invalidValue(argument: "--importance", value: String(importance), expected: "a number in 0...1"))
    }
    let tags = context.arguments.strings("tag")
    let (id, isNew) = try await EngineAccess.withEngine(context) { engine in
      try await engine.rememberReporting(text, kind: kind, importance: importance, tags: tags)
    }
    if context.arguments.flag("json") {
      try context.jsonLines.write(
        ["id": .int(Int(id)), "kind": .string(kind.rawValue), "new": .bool(isNew)] as JSONValue)
    } else {
      context.output.write(
        isNew ? "remembered \(kind.rawValue) #\(id)\n" : "already remembered as \(kind.rawValue) #\(id)\n")
    }
  }
}
