import EngramTestSupport
import Foundation
import Testing

/// Issue 17, finding 4, end to end: `engram export` to standard output gives the same bytes
/// as to a file, however many multi-byte characters fall on chunk boundaries, and
/// `engram import` refuses an export damaged the way chunked decoding damaged it.
@Suite(.timeLimit(.minutes(5)), .watchdog) struct HostileExportCLITests {
  @Test func standardOutputExportKeepsEveryMultibyteCharacter() async throws {
    let scratch = try ScratchFolder()
    let db = try await scratch.initializedDatabase()
    // 2,000 Chinese and emoji turns of 3 KB: six 1 MiB boundaries fall among the turns,
    // nearly all bytes of which belong to multi-byte characters.
    let story = String(repeating: "我们在西湖边散步吃了龙井虾仁🦐", count: 100)
    let turns = (0..<2_000).map { index in
      #"{"role":"user","content":"第\#(index)天 \#(story)","session":"s\#(index / 30)","timestamp":\#(1_700_000_000 + index)}"#
    }
    let input = try scratch.write("turns.jsonl", turns.joined(separator: "\n"))
    #expect(try await engram("ingest", "--db", db, input).status == 0)
    let file = scratch.path("export.jsonl")
    #expect(try await engram("export", "--db", db, file).status == 0)
    let toStdout = try await engram("export", "--db", db)
    #expect(toStdout.status == 0)
    let fromFile = try String(contentsOfFile: file, encoding: .utf8).split(separator: "\n")
    let fromStdout = toStdout.standardOutput.split(separator: "\n")
    #expect(fromStdout.count == fromFile.count)
    // The header's time and the end line's checksum over it differ; every row is identical.
    #expect(Array(fromStdout.dropFirst().dropLast()) == Array(fromFile.dropFirst().dropLast()))
    #expect(!toStdout.standardOutput.contains("\u{FFFD}"))

    // The stdout export imports; the same export with one character replaced is refused.
    let copy = scratch.path("copy.sqlite")
    let good = try scratch.write("stdout.jsonl", toStdout.standardOutput)
    #expect(try await engram("import", "--db", copy, good).status == 0)
    let damaged = try scratch.write(
      "damaged.jsonl", toStdout.standardOutput.replacingOccurrences(of: "西湖", with: "\u{FFFD}\u{FFFD}湖"))
    let refused = try await engram("import", "--db", scratch.path("other.sqlite"), damaged)
    #expect(refused.status == 1)
    #expect(refused.standardError.contains("the checksum does not match"))
    #expect(!FileManager.default.fileExists(atPath: scratch.path("other.sqlite")))
  }

  @Test func importNamesTheLineOfInvalidUTF8AndKeepsNothing() async throws {
    let scratch = try ScratchFolder()
    let db = try await scratch.initializedDatabase()
    #expect(try await engram("remember", "--db", db, "咖啡 ☕ every morning").status == 0)
    let file = scratch.path("export.jsonl")
    #expect(try await engram("export", "--db", db, file).status == 0)
    var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: file)))
    let lines = bytes.split(separator: 0x0A, omittingEmptySubsequences: false)
    let line = try #require(lines.firstIndex { $0.contains(0xE2) }) + 1
    // Drop one byte of ☕ (E2 98 95): the line is no longer UTF-8.
    let offset = try #require(bytes.firstIndex(of: 0xE2))
    bytes.remove(at: offset + 1)
    try Data(bytes).write(to: URL(fileURLWithPath: file))
    let result = try await engram("import", "--db", scratch.path("copy.sqlite"), file)
    #expect(result.status == 1)
    #expect(result.standardError.contains("\(file):\(line): invalid UTF-8"))
    #expect(!FileManager.default.fileExists(atPath: scratch.path("copy.sqlite")))
  }

  /// Issue 37, finding 7: an export whose row refers to a row it does not hold is refused with
  /// that row's line and a sentence (it printed SQLite's bare "FOREIGN KEY constraint failed"),
  /// and nothing is imported.
  @Test func importNamesTheLineOfADanglingReference() async throws {
    let scratch = try ScratchFolder()
    let session =
      #"{"type":"session","id":1,"external_id":"s1","title":null,"started_at":1700000000000,"#
      + #""ended_at":null,"metadata":"{}"}"#
    func message(_ id: Int, session: Int) -> String {
      #"{"type":"message","id":\#(id),"session_id":\#(session),"role":"user","speaker":null,"#
        + #""content":"turn \#(id)","created_at":1700000000000,"token_count":2,"metadata":"{}","summary_id":null}"#
    }
    // Version 1 (no end line, so no checksum to forge): the third message (line 5) refers to
    // session 7, which the export does not hold; the rows around it are sound.
    let lines = [
      #"{"type":"header","format":"engram-export","version":1,"embedding_model":"hashing-v1-384","#
        + #""embedding_dimension":384}"#,
      session, message(1, session: 1), message(2, session: 1), message(3, session: 7), message(4, session: 1),
    ]
    let file = try scratch.write("dangling.jsonl", lines.joined(separator: "\n") + "\n")
    let copy = scratch.path("copy.sqlite")
    let result = try await engram("import", "--db", copy, file)
    #expect(result.status == 1)
    #expect(result.standardError.contains("line 5"), "\(result.standardError)")
    #expect(result.standardError.contains("sessions"), "\(result.standardError)")
    #expect(!result.standardError.contains("FOREIGN KEY"), "\(result.standardError)")
    #expect(SwiftInternals.find(in: result.standardError).isEmpty, "\(result.standardError)")
    #expect(!FileManager.default.fileExists(atPath: copy))
  }
}
