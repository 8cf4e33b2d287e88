import Engram
import Foundation

/// `engram remember TEXT`: stores a memory.
public enum RememberCommand: Command {
  /// The command's declaration.
  public static let configuration = CommandConfiguration(
    commandName: "remember", abstract: "Store a memory (a fact, preference, note or event).")

  /// The command's options.
  public struct Options: ParsableOptions {
    @OptionGroup var database: DatabaseOptions
    @OptionGroup var precision: PrecisionOptions
    @Option(help: "What the memory is.") var kind = Kind.fact
    @Option(valueName: "0..1", help: "How much it matters.") var importance = 0.5
    @Option(valueName: "TAG", help: "A tag to file it under.") var tag: [String] = []
    @Option(
      valueName: "SPEC",
      help:
        "On PostgreSQL, the embedder of the user's memory when this creates it (default: the store's, "
        + "the one `engram init` chose); a memory made before keeps its own.")
    var model: String?
    @Flag(help: ArgumentHelp.json) var json = false
    @Argument(help: "What to remember (words are joined).") var text: [String]

    /// The defaults.
    public init() {}
  }

  /// The kinds of memory a person stores (summaries are written by compaction).
  enum Kind: String, CaseIterable, ExpressibleByArgument {
    case fact, preference, note, event

    /// The memory kind.
    var memoryKind: MemoryKind {
      switch self {
      case .fact: return .fact
      case .preference: return .preference
      case .note: return .note
      case .event: return .event
      }
    }
  }

  /// Stores the memory and prints its id.
  public static func run(_ options: Options, context: CommandContext) async throws {
    let text = options.text.joined(separator: " ")
    guard !text.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty else {
      throw UsageError("the text to remember is empty")
    }
    let kind = options.kind.memoryKind
    let importance = options.importance
    guard (0...1).contains(importance) else {
      throw UsageError(
        .invalidValue(argument: "--importance", value: String(importance), expected: "a number in 0...1"))
    }
    let tags = options.tag
    let model = try EmbedderOptions.spec(options.model)
    let (id, isNew) = try await EngineAccess.withEngine(context, model: model) { engine in
      try await engine.memories.rememberReporting(text, kind: kind, importance: importance, tags: tags)
    }
    if options.json {
      try context.jsonLines.write(
        ["id": .int(Int(id)), "kind": .string(kind.rawValue), "new": .bool(isNew)] as JSONValue)
    } else {
      context.output.write(
        isNew ? "remembered \(kind.rawValue) #\(id)\n" : "already remembered as \(kind.rawValue) #\(id)\n")
    }
  }
}
