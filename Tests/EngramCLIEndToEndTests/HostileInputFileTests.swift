import EngramTestSupport
import Foundation
import Testing

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// Input files that are not plain files (folders, FIFOs, pipes, standard input): each is read,
/// or refused with a sentence naming what was wrong, never Foundation's raw text.
@Suite("Hostile input files", .timeLimit(.minutes(5)), .watchdog) struct HostileInputFileTests {
  static let chat =
    #"{"role":"user","content":"I moved to Porto in March.","session":"s1"}"# + "\n"
    + #"{"role":"assistant","content":"Porto is lovely.","session":"s1"}"# + "\n"

  static func expectSentence(_ text: String, _ comment: Comment? = nil) {
    #expect(SwiftInternals.find(in: text).isEmpty, "\(text)")
  }

  /// Runs `engram ARGUMENTS...` with `feed` written into the FIFO at `fifo` by a shell at the
  /// same time (a writer blocks until the reader opens the FIFO).
  static func engramReadingFIFO(_ fifo: String, feed: String, _ arguments: [String]) async throws
    -> EngramBinary.Result
  {
    let binary = try EngramBinary.locate().path
    return try await EngramBinary.runExecutable(
      [
        "/bin/sh", "-c",
        // The writer is stopped if engram never opens the FIFO, so nothing outlives the test.
        #"cat "$1" > "$2" & writer=$!; shift 2; "$0" "$@"; status=$?; kill $writer 2>/dev/null; exit $status"#,
        binary, feed, fifo,
      ]
        + arguments)
  }

  @Test func ingestOfAFolderSaysItIsAFolder() async throws {
    let scratch = try ScratchFolder()
    let db = try await scratch.initializedDatabase()
    let folder = scratch.path("chats")
    try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    let result = try await engram("ingest", "--db", db, folder)
    #expect(result.status != 0)
    #expect(result.standardError.contains("folder"), "\(result.standardError)")
    Self.expectSentence(result.standardError)
  }

  @Test func ingestReadsAFIFO() async throws {
    let scratch = try ScratchFolder()
    let db = try await scratch.initializedDatabase()
    let source = try scratch.write("chat.jsonl", Self.chat)
    let fifo = scratch.path("chat.fifo")
    #expect(mkfifo(fifo, 0o600) == 0)
    let result = try await Self.engramReadingFIFO(fifo, feed: source, ["ingest", "--db", db, fifo])
    #expect(result.status == 0, "\(result.standardError)")
    #expect(result.standardOutput.contains("ingested 2 turns"), "\(result.standardOutput)")
    Self.expectSentence(result.standardError)
  }

  @Test func ingestReadsStandardInput() async throws {
    let scratch = try ScratchFolder()
    let db = try await scratch.initializedDatabase()
    let result = try await engram("ingest", "--db", db, "-", input: Self.chat)
    #expect(result.status == 0, "\(result.standardError)")
    #expect(result.standardOutput.contains("ingested 2 turns"), "\(result.standardOutput)")
  }

  @Test func routeReadsStandardInput() async throws {
    let result = try await engram("route", "--json", "--file", "-", input: "2^10\nwhat time is it\n")
    #expect(result.status == 0, "\(result.standardError)")
    let objects = try jsonLines(result.standardOutput)
    #expect(objects.map { $0["text"] as? String } == ["2^10", "what time is it"])
    #expect(objects.first?["skill"] as? String == "calculator")
  }

  @Test func routeReadsAFIFO() async throws {
    let scratch = try ScratchFolder()
    let source = try scratch.write("requests.txt", "square root of 81\n")
    let fifo = scratch.path("requests.fifo")
    #expect(mkfifo(fifo, 0o600) == 0)
    let result = try await Self.engramReadingFIFO(fifo, feed: source, ["route", "--json", "--file", fifo])
    #expect(result.status == 0, "\(result.standardError)")
    let objects = try jsonLines(result.standardOutput)
    #expect(objects.map { $0["skill"] as? String } == ["calculator"])
  }

  @Test func importOfAFolderSaysItIsAFolder() async throws {
    let scratch = try ScratchFolder()
    let folder = scratch.path("exports")
    try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    let db = scratch.path("new.sqlite")
    let result = try await engram("import", "--db", db, folder)
    #expect(result.status != 0)
    #expect(result.standardError.contains("folder"), "\(result.standardError)")
    #expect(!result.standardError.contains("header"), "\(result.standardError)")
    #expect(!FileManager.default.fileExists(atPath: db))
    Self.expectSentence(result.standardError)
  }

  @Test func importReadsAFIFO() async throws {
    let scratch = try ScratchFolder()
    let db = try await scratch.initializedDatabase()
    #expect(try await engram("remember", "--db", db, "I moved to Porto in March.").status == 0)
    let exported = try await engram("export", "--db", db)
    #expect(exported.status == 0)
    let source = try scratch.write("memory.export", exported.standardOutput)
    let fifo = scratch.path("memory.fifo")
    #expect(mkfifo(fifo, 0o600) == 0)
    let target = scratch.path("copy.sqlite")
    let result = try await Self.engramReadingFIFO(
      fifo, feed: source, ["import", "--db", target, "--model", "hashing:384", fifo])
    #expect(result.status == 0, "\(result.standardError)")
    #expect(result.standardOutput.contains("imported"), "\(result.standardOutput)")
  }

  /// Each command's usual error paths (a missing file, a folder, a bad value) print one
  /// sentence on stderr, never Swift's or Foundation's rendering of an error.
  @Test func everyCommandsErrorsAreSentences() async throws {
    let scratch = try ScratchFolder()
    let db = try await scratch.initializedDatabase()
    let folder = scratch.path("folder")
    try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    let missing = scratch.path("missing.jsonl")
    let notUTF8 = scratch.path("latin1.jsonl")
    try Data([0x7B, 0xE9, 0x7D, 0x0A]).write(to: URL(fileURLWithPath: notUTF8))
    let runs: [[String]] = [
      ["ingest", "--db", db, missing], ["ingest", "--db", db, folder], ["ingest", "--db", db, notUTF8],
      ["import", "--db", scratch.path("a.sqlite"), missing],
      ["import", "--db", scratch.path("b.sqlite"), folder],
      ["import", "--db", scratch.path("c.sqlite"), notUTF8], ["route", "--file", missing],
      ["route", "--file", folder], ["route", "--file", notUTF8], ["route", "--now", "tomorrow", "2+2"],
      ["query", "--db", folder, "x"], ["query", "--db", db, "-k", "many", "x"], ["stats", "--db", missing],
      ["remember", "--db", db], ["forget", "--db", db, "--id", "x"],
      ["export", "--db", db, "--format", "pdf"],
      ["compact", "--db", missing], ["doctor", "--db", folder], ["reindex", "--db", missing],
      ["init", "--db", folder], ["init", "--db", scratch.path("d.sqlite"), "--model", "nonsense"],
      ["chat", "--db", db, "--now", "soon"], ["skills", "--db", missing], ["nonsense"],
    ]
    for arguments in runs {
      let result = try await EngramBinary.run(arguments)
      #expect(result.status != 0, "\(arguments)")
      #expect(!result.standardError.isEmpty, "\(arguments)")
      #expect(SwiftInternals.find(in: result.standardError).isEmpty, "\(arguments): \(result.standardError)")
    }
  }
}
