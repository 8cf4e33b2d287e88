import Engram
import EngramMCP
import Foundation

/// `engram demo`: the whole pipeline on a small built-in conversation, in a temporary memory.
public enum DemoCommand: Command {
  /// The command's declaration.
  public static let configuration = CommandConfiguration(
    commandName: "demo", abstract: "Run the main job on a built-in example (temporary memory).",
    discussion: """
      Ingests a short two-person chat, remembers three things, runs three hybrid queries,
      builds a prompt context, compacts and prints stats. Needs all-MiniLM-L6-v2 (`make demo`
      installs it); --model hashing runs without it.
      """)

  /// The command's options.
  public struct Options: ParsableOptions {
    @Option(valueName: "SPEC", help: "The embedder.") var model = "minilm"
    @Flag(help: "Keep the temporary memory and print its path.") var keep = false

    /// The defaults.
    public init() {}
  }

  /// Two friends planning a trip, over two sessions in spring 2024.
  static let conversation = """
    {"session": "trip-planning", "speaker": "Maya", "role": "user", "timestamp": "2024-03-02T18:04:00Z", "content": "Hey Leo! I finally booked the time off: two weeks in late May."}
    {"session": "trip-planning", "speaker": "Leo", "role": "assistant", "timestamp": "2024-03-02T18:05:10Z", "content": "Amazing. Are we still thinking Portugal, or did the Japan idea win?"}
    {"session": "trip-planning", "speaker": "Maya", "role": "user", "timestamp": "2024-03-02T18:06:30Z", "content": "Portugal. Japan in cherry blossom season is way over budget this year."}
    {"session": "trip-planning", "speaker": "Leo", "role": "assistant", "timestamp": "2024-03-02T18:07:45Z", "content": "Fair. Lisbon first, then down to the Algarve for the beaches?"}
    {"session": "trip-planning", "speaker": "Maya", "role": "user", "timestamp": "2024-03-02T18:09:00Z", "content": "Yes, but I want a few days in Porto too. I have heard the port cellars in Gaia are worth it."}
    {"session": "trip-planning", "speaker": "Leo", "role": "assistant", "timestamp": "2024-03-02T18:10:20Z", "content": "Reminder that I am vegetarian, so we should check the restaurants in advance."}
    {"session": "trip-planning", "speaker": "Maya", "role": "user", "timestamp": "2024-03-02T18:11:05Z", "content": "Noted. And I cannot do long bus rides, I get motion sick. Trains are fine."}
    {"session": "trip-planning", "speaker": "Leo", "role": "assistant", "timestamp": "2024-03-02T18:12:40Z", "content": "The Alfa Pendular train goes Lisbon to Porto in about three hours. Perfect."}
    {"session": "trip-planning", "speaker": "Maya", "role": "user", "timestamp": "2024-03-02T18:14:00Z", "content": "Budget check: I can spend around 1800 euros including flights."}
    {"session": "trip-planning", "speaker": "Leo", "role": "assistant", "timestamp": "2024-03-02T18:15:30Z", "content": "Same for me. Let us look for guesthouses instead of hotels."}
    {"session": "trip-planning", "speaker": "Maya", "role": "user", "timestamp": "2024-03-02T18:16:10Z", "content": "Thanks, talk soon!"}
    {"session": "bookings", "speaker": "Leo", "role": "assistant", "timestamp": "2024-04-14T09:30:00Z", "content": "Morning! I found a guesthouse in Alfama with a rooftop terrace, 65 euros a night."}
    {"session": "bookings", "speaker": "Maya", "role": "user", "timestamp": "2024-04-14T09:31:20Z", "content": "Book it! Which dates did you pick for Lisbon?"}
    {"session": "bookings", "speaker": "Leo", "role": "assistant", "timestamp": "2024-04-14T09:32:45Z", "content": "May 20 to May 24 in Lisbon, then the train to Porto on the 24th."}
    {"session": "bookings", "speaker": "Maya", "role": "user", "timestamp": "2024-04-14T09:34:00Z", "content": "My flight lands at 11:40 on May 20, TAP from Berlin."}
    {"session": "bookings", "speaker": "Leo", "role": "assistant", "timestamp": "2024-04-14T09:35:30Z", "content": "I will meet you at the airport then. My sister Ana lives in Porto, she offered to show us around."}
    {"session": "bookings", "speaker": "Maya", "role": "user", "timestamp": "2024-04-14T09:36:50Z", "content": "Lovely. I should bring her something from Berlin, maybe marzipan?"}
    {"session": "bookings", "speaker": "Leo", "role": "assistant", "timestamp": "2024-04-14T09:38:15Z", "content": "She would love that. Also, I still need to renew my passport before May."}
    {"session": "bookings", "speaker": "Maya", "role": "user", "timestamp": "2024-04-14T09:39:40Z", "content": "Do it this week! Appointments take a while."}
    {"session": "bookings", "speaker": "Leo", "role": "assistant", "timestamp": "2024-04-14T09:40:30Z", "content": "Ok, see you!"}
    """

  /// Runs the demo.
  public static func run(_ options: Options, context: CommandContext) async throws {
    let spec: EmbedderSpec
    switch EmbedderSpec.parseOption(options.model) {
    case .success(let parsed): spec = parsed
    case .failure(let error): throw UsageError(error.description)
    }
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent(
      "engram-demo-\(UUID().uuidString)")
    let keep = options.keep
    try await EngineAccess.mappingErrors {
      let embedder = try spec.makeEmbedder(environment: context.environment)
      try FileManager.default.createDirectory(
        at: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
      defer { if !keep { try? FileManager.default.removeItem(at: folder) } }
      let path = folder.appendingPathComponent("memory.sqlite").path
      let engine = try MemoryEngine(path: path, configuration: EngramConfiguration(embedder: embedder))
      try await EngineAccess.closing(engine) { engine in
        try await engine.maintenance.setEmbedderSpec(spec.text)
        try await demo(engine, embedder: embedder, context: context)
        if keep { context.output.write("\nthe memory is kept at \(path)\n") }
      }
    }
  }

  static func demo(_ engine: MemoryEngine, embedder: any Embedder, context: CommandContext) async throws {
    let out = context.output
    let width = context.terminal.width
    let styled = context.terminal.colorsOutput
    func heading(_ text: String) {
      out.write("\n" + TextStyle.bold.apply(to: "== " + text, enabled: styled) + "\n")
    }

    heading("memory: \(engine.path)")
    out.write("embedder: \(embedder.modelID) (\(embedder.dimension)-d)\n")

    heading("ingest a two-person chat")
    let file = try ConversationFile.parse(
      Data(conversation.utf8), path: "demo-chat.jsonl", defaultSession: "demo")
    let bar = ProgressBar(label: "ingest demo-chat.jsonl", total: file.turnCount, context: context)
    let report = try await engine.conversation.ingest(file, path: "demo-chat.jsonl") { progress in
      if progress.phase == "embedding" { bar.update(done: progress.done) }
    }
    bar.finish()
    out.write("ingested \(report.turns) turns in \(report.sessions) sessions\n")

    heading("remember three things")
    let memories: [(String, MemoryKind, Double)] = [
      ("Leo is vegetarian", .preference, 0.9),
      ("Maya gets motion sick on long bus rides; trains are fine", .fact, 0.8),
      ("Trip budget is about 1800 euros per person, flights included", .note, 0.6),
    ]
    for (text, kind, importance) in memories {
      let id = try await engine.memories.remember(text, kind: kind, importance: importance)
      out.write("remembered \(kind.rawValue) #\(id): \(text)\n")
    }

    for query in [
      "where are they staying in Lisbon?", "food restrictions for restaurants",
      "when does Maya's flight arrive",
    ] {
      heading("query: \(query)")
      let hits = try await engine.search(query, k: 5, mode: .hybrid)
      for line in HitRendering.table(hits, width: width, styled: styled) { out.write(line + "\n") }
    }

    heading("prompt context for: what should I pack for Porto?")
    let promptContext = try await engine.context(for: "what should I pack for Porto?", budget: 300)
    out.write(promptContext.rendered)
    if !promptContext.rendered.hasSuffix("\n") { out.write("\n") }
    out.write(
      "(\(promptContext.tokenCount) of \(promptContext.budget) tokens, \(promptContext.omitted) items left out)\n"
    )

    heading("compact (conversation older than 30 days)")
    let compaction = try await engine.compact(olderThan: 30 * 86_400)
    for line in compaction.plan { out.write("  " + line + "\n") }
    for line in CompactCommand.summary(compaction) { out.write(line + "\n") }

    heading("stats")
    for line in StatsCommand.lines(try await EngineJSON.stats(engine)) { out.write(line + "\n") }
  }
}
