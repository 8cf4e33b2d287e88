import Engram
import EngramEmbeddings
import Foundation

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// `engram-crashtest DB MODE [--tag T] [--count N] [--dimension D] [--turns N]`
///
/// Writes to the memory at DB in a loop and prints one acknowledgement line per write, only
/// after the write returned (so every printed line names a committed write):
///
/// - `remember`: `ACK memory <id> <tag>-<n>`, one memory per write.
/// - `ingest`: `ACK ingest <tag>-file-<n> <turns>`, one JSONL file (turns embedded in small
///   batches, then stored in one transaction) per write.
/// - `compact`: `ACK ingest ...` for an old session, then `ACK compact <n> <summaries>`.
/// - `reindex`: `ACK reindex <n> <model>`, switching between two hashing dimensions.
///
/// `READY` is printed once the engine is open; errors print `ERR <mode> <description>` and the
/// loop goes on. The reliability tests kill this process with SIGKILL at random moments and
/// check the database afterwards. Stops after `--count` writes (default: never).
struct CrashTest {
  var path: String
  var mode: String
  var tag = "w"
  var count = Int.max
  var dimension = 64
  var turns = 24

  static func parse(_ arguments: [String]) -> CrashTest? {
    guard arguments.count >= 2 else { return nil }
    var test = CrashTest(path: arguments[0], mode: arguments[1])
    var rest = arguments.dropFirst(2)
    while let flag = rest.popFirst() {
      guard let value = rest.popFirst() else { return nil }
      switch flag {
      case "--tag": test.tag = value
      case "--count": test.count = Int(value) ?? test.count
      case "--dimension": test.dimension = Int(value) ?? test.dimension
      case "--turns": test.turns = Int(value) ?? test.turns
      default: return nil
      }
    }
    return test
  }

  /// One line on stdout, written with one `write(2)` so a kill never splits it.
  static func say(_ line: String) {
    let bytes = Array((line + "\n").utf8)
    var offset = 0
    while offset < bytes.count {
      let written = bytes[offset...].withUnsafeBytes { write(1, $0.baseAddress, $0.count) }
      if written <= 0 { return }
      offset += written
    }
  }

  func configuration(dimension: Int) throws -> EngramConfiguration {
    EngramConfiguration(
      embedder: try HashingEmbedder(dimension: dimension), busyTimeout: .seconds(10), embeddingBatchSize: 4)
  }

  /// The JSONL text of file `n`: `turns` turns in one session named after the file, dated
  /// `old` days back (compaction only touches old sessions).
  func conversation(_ name: String, turns: Int, daysAgo: Double) -> String {
    let start = Date().addingTimeInterval(-daysAgo * 86_400)
    let formatter = ISO8601DateFormatter()
    var lines: [String] = []
    let topics = [
      "climbing", "the dentist", "a trip to Lisbon", "thanks", "hello", "the garden", "a new job",
    ]
    for turn in 0..<turns {
      let date = formatter.string(from: start.addingTimeInterval(Double(turn) * 60))
      let speaker = turn % 2 == 0 ? "Alice" : "Bob"
      let topic = topics[(turn * 7 + name.count) % topics.count]
      let content = "\(name) turn-\(turn) of \(turns): \(speaker) talks about \(topic) at length"
      lines.append(
        "{\"role\":\"user\",\"session\":\"\(name)\",\"speaker\":\"\(speaker)\",\"timestamp\":\"\(date)\","
          + "\"content\":\"\(content)\"}")
    }
    return lines.joined(separator: "\n") + "\n"
  }

  func run() async throws {
    let folder = URL(fileURLWithPath: path).deletingLastPathComponent()
    switch mode {
    case "remember", "ingest", "compact":
      let engine = try MemoryEngine(path: path, configuration: configuration(dimension: dimension))
      defer { engine.close() }
      Self.say("READY")
      var n = 0
      while n < count {
        do {
          switch mode {
          case "remember":
            let id = try await engine.memories.remember(
              "crash memory \(tag)-\(n): the user likes topic \(n % 17)", kind: .fact)
            Self.say("ACK memory \(id) \(tag)-\(n)")
          case "ingest":
            let name = "\(tag)-file-\(UUID().uuidString.prefix(8))"
            let file = folder.appendingPathComponent(name + ".jsonl").path
            try Data(conversation(name, turns: turns, daysAgo: 1).utf8).write(to: URL(fileURLWithPath: file))
            let report = try await engine.conversation.ingest(path: file)
            Self.say("ACK ingest \(name) \(report.turns)")
            try? FileManager.default.removeItem(atPath: file)
          default:
            let name = "\(tag)-old-\(UUID().uuidString.prefix(8))"
            let file = folder.appendingPathComponent(name + ".jsonl").path
            try Data(conversation(name, turns: turns, daysAgo: 90).utf8).write(to: URL(fileURLWithPath: file))
            let report = try await engine.conversation.ingest(path: file)
            Self.say("ACK ingest \(name) \(report.turns)")
            try? FileManager.default.removeItem(atPath: file)
            _ = try await engine.memories.remember("duplicate fact \(n % 3): Alice climbs on Saturdays")
            let compaction = try await engine.compact(olderThan: 30 * 86_400)
            Self.say("ACK compact \(n) \(compaction.summariesCreated)")
          }
        } catch {
          Self.say("ERR \(mode) \(error)")
        }
        n += 1
      }
    case "reindex":
      Self.say("READY")
      var n = 0
      while n < count {
        // Alternate between two models; the database's current one decides the next.
        let next = n % 2 == 0 ? dimension + 32 : dimension
        do {
          let engine = try await MemoryEngine.reindex(
            path: path, configuration: configuration(dimension: next))
          let model = engine.embedder.modelID
          await engine.close()
          Self.say("ACK reindex \(n) \(model)")
        } catch {
          Self.say("ERR reindex \(error)")
        }
        n += 1
      }
    default:
      Self.say("ERR usage unknown mode \(mode)")
      exit(64)
    }
  }
}

@main
enum CrashTestMain {
  static func main() async {
    guard let test = CrashTest.parse(Array(CommandLine.arguments.dropFirst())) else {
      FileHandle.standardError.write(
        Data(
          "usage: engram-crashtest DB remember|ingest|compact|reindex [--tag T] [--count N] [--dimension D] [--turns N]\n"
            .utf8))
      exit(64)
    }
    do {
      try await test.run()
    } catch {
      CrashTest.say("ERR open \(error)")
      exit(1)
    }
  }
}
