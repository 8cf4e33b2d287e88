import EngramStore
import EngramTestSupport
import Foundation
import Testing

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// Read commands write nothing and work on a memory the user cannot write (issue 15; issue
/// 17, findings 6 and 12): the built binary on temporary memories, hashing embedder.
@Suite(.timeLimit(.minutes(5)), .watchdog) struct HostileReadOnlyTests {
  /// A memory with turns, one remembered fact (so a search hits a memory, which used to
  /// write access statistics); no `.vectors` snapshot (it has fewer vectors than
  /// `EngramConfiguration.snapshotMinimumRows`, so its index loads from the database).
  static func populated(_ scratch: ScratchFolder) async throws -> String {
    let path = try await scratch.initializedDatabase()
    var lines = ""
    for index in 0..<40 {
      lines +=
        #"{"role":"user","speaker":"Ann","session":"s\#(index / 10)","content":"turn \#(index) about hiking and peanuts"}"#
        + "\n"
    }
    let file = try scratch.write("turns.jsonl", lines)
    #expect(try await engram("ingest", "--db", path, file).status == 0)
    #expect(try await engram("remember", "--db", path, "Ann is allergic to peanuts").status == 0)
    return path
  }

  /// Every file of `folder` with its bytes and modification time.
  static func listing(_ folder: URL) throws -> [String: (Data, Date)] {
    var files: [String: (Data, Date)] = [:]
    for name in try FileManager.default.contentsOfDirectory(atPath: folder.path) {
      let path = folder.appendingPathComponent(name).path
      let modified = try FileManager.default.attributesOfItem(atPath: path)[.modificationDate] as? Date
      files[name] = (try Data(contentsOf: URL(fileURLWithPath: path)), modified ?? .distantPast)
    }
    return files
  }

  static let readCommands: [[String]] = [
    ["query", "peanuts"], ["query", "peanuts", "--mode", "vector"], ["query", "hiking", "--mode", "keyword"],
    ["stats"], ["stats", "--json"], ["doctor"], ["compact", "--dry-run"], ["bench", "-k", "3"],
  ]

  @Test func readCommandsLeaveTheFolderByteIdentical() async throws {
    let scratch = try ScratchFolder()
    let path = try await Self.populated(scratch)
    let before = try Self.listing(scratch.url)
    // Small: no snapshot, and no read command may write one.
    #expect(!before.keys.contains("memory.sqlite.vectors"))
    let export = FileManager.default.temporaryDirectory.appendingPathComponent(
      "engram-export-\(UUID().uuidString)")
    defer { try? FileManager.default.removeItem(at: export) }
    for arguments in Self.readCommands + [["export", export.path]] {
      let result = try await EngramBinary.run(
        arguments + ["--db", path], environment: ScratchFolder.environment)
      #expect(result.status == 0, "\(arguments): \(result.standardError)")
      let after = try Self.listing(scratch.url)
      #expect(Set(after.keys) == Set(before.keys), "\(arguments) left \(after.keys.sorted())")
      for (name, (bytes, modified)) in before {
        #expect(after[name]?.0 == bytes, "\(arguments) changed \(name)")
        #expect(after[name]?.1 == modified, "\(arguments) touched \(name)")
      }
    }
  }

  @Test func aReadOnlyFileIsSearchable() async throws {
    let scratch = try ScratchFolder()
    let path = try await Self.populated(scratch)
    #expect(chmod(path, 0o444) == 0)
    defer { chmod(path, 0o600) }
    let before = try Self.listing(scratch.url)
    let query = try await engram("query", "--db", path, "peanuts", "--json")
    #expect(query.status == 0, "\(query.standardError)")
    #expect(query.standardOutput.contains("Ann is allergic to peanuts"))
    let stats = try await engram("stats", "--db", path, "--json")
    #expect(stats.status == 0, "\(stats.standardError)")
    #expect(try jsonObject(stats.standardOutput)["memories"] as? Int == 1)
    #expect(try await engram("doctor", "--db", path).status == 0)
    let after = try Self.listing(scratch.url)
    #expect(Set(after.keys) == Set(before.keys))
    #expect(after["memory.sqlite"]?.0 == before["memory.sqlite"]?.0)
    // Writing is still refused, with the reason.
    let remember = try await engram("remember", "--db", path, "x")
    #expect(remember.status == 1)
    #expect(remember.standardError.contains("read-only"))
  }

  /// A folder the user cannot write, with a file the user cannot write: as root (which
  /// ignores permissions) the commands run as `nobody` through setpriv, so the kernel really
  /// refuses every write, lock files included.
  @Test func aReadOnlyFolderIsSearchable() async throws {
    let scratch = try ScratchFolder()
    let path = try await Self.populated(scratch)
    let setpriv = "/usr/bin/setpriv"
    let asNobody = geteuid() == 0 && FileManager.default.isExecutableFile(atPath: setpriv)
    if asNobody {
      for item in [scratch.url.path, path] { #expect(chown(item, 65534, 65534) == 0) }
    }
    #expect(chmod(path, 0o444) == 0)
    #expect(chmod(scratch.url.path, 0o555) == 0)
    defer {
      chmod(scratch.url.path, 0o755)
      chmod(path, 0o600)
    }
    let before = try Self.listing(scratch.url)
    func run(_ arguments: String...) async throws -> EngramBinary.Result {
      guard asNobody else {
        return try await EngramBinary.run(arguments, environment: ScratchFolder.environment)
      }
      let binary = try EngramBinary.locate().path
      let wrapped = [setpriv, "--reuid=65534", "--regid=65534", "--clear-groups", binary] + arguments
      return try await EngramBinary.runExecutable(wrapped, environment: ScratchFolder.environment)
    }
    let query = try await run("query", "--db", path, "peanuts", "--json")
    #expect(query.status == 0, "\(query.standardError)")
    #expect(query.standardOutput.contains("Ann is allergic to peanuts"))
    let vector = try await run("query", "--db", path, "allergic peanuts", "--mode", "vector", "--json")
    #expect(vector.status == 0, "\(vector.standardError)")
    #expect(vector.standardOutput.contains("Ann is allergic to peanuts"))
    let stats = try await run("stats", "--db", path, "--json")
    #expect(stats.status == 0, "\(stats.standardError)")
    #expect(try jsonObject(stats.standardOutput)["memories"] as? Int == 1)
    let after = try Self.listing(scratch.url)
    #expect(Set(after.keys) == Set(before.keys))
  }

  /// Finding 6: a search whose hits include a memory used to write access statistics, so
  /// while another process held the write lock `engram query` waited 5 s and failed "locked".
  @Test func queryAnswersWhileAnotherProcessHoldsTheWriteLock() async throws {
    let scratch = try ScratchFolder()
    let path = try await Self.populated(scratch)
    // Another process (here the test process) holds the write lock for the whole query.
    let writer = try Connection(path: path)
    try writer.execute("BEGIN IMMEDIATE")
    defer { try? writer.execute("ROLLBACK") }
    // Waiting for the lock would take the 5 s busy timeout, then fail "locked" (exit 1).
    let result = try await engram("query", "--db", path, "peanuts", "--json")
    #expect(result.status == 0, "\(result.standardError)")
    #expect(result.standardOutput.contains("Ann is allergic to peanuts"))
  }
}
