import EngramEmbeddings
import EngramStore
import EngramTestSupport
import EngramVectors
import Foundation
import Synchronization
import Testing

@testable import Engram

/// Issue 17, findings 1 (export part), 4, 8 and 12 (imported vectors): an export is private
/// from its first byte, a damaged export is refused, and so is a vector the index cannot hold.
@Suite(.timeLimit(.minutes(5)), .watchdog) struct HostileExportTests {
  static let turns = (0..<40).map { index in
    #"{"role":"user","content":"第\#(index)天：我们去了长城 🏯🎉 and ate 饺子 😋","session":"s\#(index % 4)","speaker":"Ann","timestamp":\#(1_700_000_000 + index * 60)}"#
  }.joined(separator: "\n")

  /// A memory with turns, a memory and a preference, exported to `export.jsonl`.
  static func exported(_ folder: TemporaryFolder) async throws -> (MemoryEngine, String) {
    let file = folder.path("turns.jsonl")
    try writeFile(turns, to: file)
    let engine = try MemoryEngine(path: folder.path("a.sqlite"), configuration: hashingConfiguration())
    _ = try await engine.conversation.ingest(path: file)
    _ = try await engine.memories.remember("Ann's locker code is 4512", kind: .fact)
    try await engine.userPreferences.set("timezone", "Asia/Shanghai", pinned: true)
    let export = folder.path("export.jsonl")
    try await engine.transfer.export(to: export)
    return (engine, export)
  }

  static func lines(_ path: String) throws -> [String] {
    try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n").map(String.init)
  }

  /// Imports `text` into a fresh memory and returns the error, checking nothing was stored.
  static func importFailure(_ text: String, folder: TemporaryFolder) async throws -> (any Error)? {
    let file = folder.path("damaged-\(UUID().uuidString).jsonl")
    try writeFile(text, to: file)
    let target = try MemoryEngine(
      path: folder.path("t-\(UUID().uuidString).sqlite"), configuration: hashingConfiguration())
    defer { target.close() }
    do {
      try await target.transfer.importExport(from: file)
      return nil
    } catch {
      #expect(try await target.maintenance.tableCounts().values.allSatisfy { $0 == 0 })
      return error
    }
  }

  @Test func aSymlinkAtTheOldTemporaryNameIsNeverFollowed() async throws {
    let folder = try TemporaryFolder()
    let (engine, _) = try await Self.exported(folder)
    defer { engine.close() }
    let victim = folder.path("victim.txt")
    try writeFile("precious", to: victim)
    let destination = folder.path("out.jsonl")
    // The name the export used to write through, and a random-looking one beside it.
    try FileManager.default.createSymbolicLink(
      atPath: destination + ".tmp-\(getpid())", withDestinationPath: victim)
    try await engine.transfer.export(to: destination)
    #expect(try String(contentsOfFile: victim, encoding: .utf8) == "precious")
    #expect(
      (try FileManager.default.attributesOfItem(atPath: destination)[.posixPermissions] as? Int) == 0o600)
    let left = try FileManager.default.contentsOfDirectory(atPath: folder.url.path).filter {
      $0.contains(".tmp-")
    }
    #expect(left == ["out.jsonl.tmp-\(getpid())"])
  }

  @Test func theTemporaryFileIsPrivateAndUnpredictableFromItsCreation() throws {
    let folder = try TemporaryFolder()
    let destination = folder.path("export.jsonl")
    var first: SecureTemporaryFile? = try SecureTemporaryFile(beside: destination)
    let second = try SecureTemporaryFile(beside: destination)
    let planted = try #require(first?.path)
    // Mode 0600 before a byte is written (the umask can only take bits away).
    #expect((try FileManager.default.attributesOfItem(atPath: planted)[.posixPermissions] as? Int) == 0o600)
    #expect(planted != second.path && !planted.contains(String(getpid())))
    // Dropped without commit, it is gone; a link planted at its name is refused, not followed.
    first = nil
    #expect(!FileManager.default.fileExists(atPath: planted))
    let victim = folder.path("victim.txt")
    try writeFile("precious", to: victim)
    try FileManager.default.createSymbolicLink(atPath: planted, withDestinationPath: victim)
    #expect(open(planted, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600) == -1)
    try "data".utf8CString.dropLast().map { UInt8(bitPattern: $0) }.withUnsafeBytes { try second.write($0) }
    try second.commit()
    #expect(try String(contentsOfFile: destination, encoding: .utf8) == "data")
    #expect(try String(contentsOfFile: victim, encoding: .utf8) == "precious")
  }

  @Test func streamedChunksAreWholeLinesOfValidUTF8() async throws {
    let folder = try TemporaryFolder()
    let (engine, export) = try await Self.exported(folder)
    defer { engine.close() }
    // Enough rows that the 1 MiB chunks split the export many times.
    for index in 0..<1_000 {
      _ = try await engine.memories.remember("回忆 \(index)：😀 在上海吃了小笼包 🥟 with Ann", kind: .note)
    }
    // The sink runs on a `BlockingWork` thread, one chunk after another.
    let received = Mutex((chunks: 0, joined: Data()))
    try await engine.transfer.export { chunk in
      #expect(chunk.last == 0x0A)
      #expect(String(validating: chunk.bindMemory(to: UInt8.self), as: UTF8.self) != nil)
      received.withLock {
        $0.chunks += 1
        $0.joined.append(contentsOf: chunk)
      }
    }
    let (chunks, joined) = received.withLock { ($0.chunks, $0.joined) }
    #expect(chunks > 1)
    let file = folder.path("again.jsonl")
    try await engine.transfer.export(to: file)
    let streamed = String(decoding: joined, as: UTF8.self).split(separator: "\n").map(String.init)
    let written = try Self.lines(file)
    // Equal but for the header's time and the checksum that covers it.
    #expect(
      streamed.count == written.count
        && Array(streamed.dropFirst().dropLast()) == Array(written.dropFirst().dropLast()))
    _ = export
  }

  @Test func escapesAndInvalidStoredTextRoundTripAsValidJSON() async throws {
    let folder = try TemporaryFolder()
    let engine = try MemoryEngine(path: folder.path("a.sqlite"), configuration: hashingConfiguration())
    defer { engine.close() }
    let tricky = "quote \" backslash \\ newline \n tab \t bell \u{07} nul \u{00} del \u{7F} 𝄞 é 中"
    let id = try await engine.memories.remember(tricky, kind: .note)
    let broken = try await engine.memories.remember("to be damaged", kind: .note)
    // Another tool wrote bytes that are not UTF-8 (a lone continuation byte, a cut character).
    try engine.database.write { connection in
      try connection.run(
        "UPDATE memories SET content = CAST(x'61ff62e4b8' AS TEXT) WHERE id = ?1", [.integer(broken)])
    }
    let file = folder.path("export.jsonl")
    try await engine.transfer.export(to: file)
    let data = try Data(contentsOf: URL(fileURLWithPath: file))
    #expect(String(validating: [UInt8](data), as: UTF8.self) != nil)
    let target = try MemoryEngine(path: folder.path("b.sqlite"), configuration: hashingConfiguration())
    defer { target.close() }
    try await target.transfer.importExport(from: file)
    let contents = Dictionary(
      uniqueKeysWithValues: try await target.memories.list().map { ($0.id, $0.content) })
    #expect(contents[id] == tricky)
    #expect(contents[broken] == "a\u{FFFD}b\u{FFFD}")
  }

  @Test func importRefusesInvalidUTF8NamingTheLine() async throws {
    let folder = try TemporaryFolder()
    let (engine, export) = try await Self.exported(folder)
    await engine.close()
    var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: export)))
    // Cut in half the first multi-byte character from line 5 on.
    var line = 1
    var index = 0
    while line < 5 || bytes[index] < 0x80 {
      if bytes[index] == 0x0A { line += 1 }
      index += 1
    }
    #expect(line > 2)
    bytes.remove(at: index + 1)
    let damaged = folder.path("invalid.jsonl")
    try Data(bytes).write(to: URL(fileURLWithPath: damaged))
    let target = try MemoryEngine(path: folder.path("t.sqlite"), configuration: hashingConfiguration())
    defer { target.close() }
    await #expect(throws: ImportError.invalidUTF8(path: damaged, line: line)) {
      try await target.transfer.importExport(from: damaged)
    }
    #expect(try await target.maintenance.tableCounts().values.allSatisfy { $0 == 0 })
  }

  @Test func importRefusesAnExportDamagedByReplacementCharactersOrTruncated() async throws {
    let folder = try TemporaryFolder()
    let (engine, export) = try await Self.exported(folder)
    await engine.close()
    let lines = try Self.lines(export)
    let last = lines.count
    // What decoding 1 MiB chunks separately did: a character split at a boundary became
    // U+FFFD, still valid UTF-8.
    let target = lines.firstIndex { $0.contains("长城") }!
    var replaced = lines
    replaced[target] = replaced[target].replacingOccurrences(of: "长", with: "\u{FFFD}\u{FFFD}")
    let altered = try await Self.importFailure(replaced.joined(separator: "\n") + "\n", folder: folder)
    #expect(
      altered as? EngramError
        == .malformedExport(
          line: last, reason: "the checksum does not match: the file was changed or damaged after export"))
    // Cut short: the end line is missing.
    let truncated = try await Self.importFailure(
      lines.dropLast(3).joined(separator: "\n") + "\n", folder: folder)
    #expect(
      truncated as? EngramError
        == .malformedExport(line: last - 2, reason: "the file ends without its end line (truncated)"))
    // A line dropped from the middle.
    var dropped = lines
    dropped.remove(at: 3)
    let lost = try await Self.importFailure(dropped.joined(separator: "\n") + "\n", folder: folder)
    #expect(
      lost as? EngramError
        == .malformedExport(
          line: last - 1,
          reason:
            "the end line counts \(last - 1) lines but \(last - 2) precede it (lines were lost or added)"))
    // Intact, it imports.
    #expect(try await Self.importFailure(lines.joined(separator: "\n") + "\n", folder: folder) == nil)
  }

  /// An embedding line of a version 1 export (no end line) with `vector` as its floats.
  static func exportWithVector(_ vector: [Float], dimension: Int = 256, encoding: String = "f32") -> String {
    let blob = vector.withUnsafeBytes { Data($0) }.base64EncodedString()
    let model = try! HashingEmbedder(dimension: 256).modelID
    return [
      #"{"type":"header","format":"engram-export","version":1,"embedding_model":"\#(model)","embedding_dimension":256}"#,
      #"{"type":"memory","id":1,"kind":"fact","content":"x","created_at":0,"updated_at":0}"#,
      #"{"type":"embedding","id":1,"owner_kind":"memory","owner_id":1,"model":"\#(model)","dimension":\#(dimension),"encoding":"\#(encoding)","vector":{"base64":"\#(blob)"},"created_at":0}"#,
    ].joined(separator: "\n") + "\n"
  }

  @Test func importRefusesVectorsTheIndexCannotHold() async throws {
    let folder = try TemporaryFolder()
    var unit = [Float](repeating: 0, count: 256)
    unit[0] = 1
    #expect(try await Self.importFailure(Self.exportWithVector(unit), folder: folder) == nil)
    var huge = unit
    huge[3] = 1e38
    #expect(
      try await Self.importFailure(Self.exportWithVector(huge), folder: folder) as? EngramError
        == .invalidExportVector(line: 3, reason: .overflow))
    var notANumber = unit
    notANumber[7] = .nan
    #expect(
      try await Self.importFailure(Self.exportWithVector(notANumber), folder: folder) as? EngramError
        == .invalidExportVector(line: 3, reason: .nonFinite))
    var infinite = unit
    infinite[0] = .infinity
    #expect(
      try await Self.importFailure(Self.exportWithVector(infinite), folder: folder) as? EngramError
        == .invalidExportVector(line: 3, reason: .nonFinite))
    #expect(
      try await Self.importFailure(Self.exportWithVector([Float](repeating: 0, count: 256)), folder: folder)
        as? EngramError == .invalidExportVector(line: 3, reason: .zero))
    #expect(
      try await Self.importFailure(
        Self.exportWithVector(Array(unit.prefix(128)), dimension: 128), folder: folder)
        as? EngramError == .invalidExportVector(line: 3, reason: .wrongDimension))
    #expect(
      try await Self.importFailure(Self.exportWithVector(Array(unit.prefix(128))), folder: folder)
        as? EngramError
        == .invalidExportVector(line: 3, reason: .wrongDimension))
  }
}
