import EngramCore
import EngramEmbeddings
import EngramTestSupport
import Foundation
import Testing

@testable import Engram

/// Issues 46 and 51: ingest under hostile input. A ChatGPT conversation with a dangling
/// reference keeps the turns its mapping holds; a folder is never read outside itself; a turn
/// longer than the limit is stored as ordered parts that search finds and join back byte for
/// byte.
@Suite(.timeLimit(.minutes(5)), .watchdog) struct HostileIngestTests {
  /// A ChatGPT conversation: root -> u1 (user) -> a1 (assistant), a1 naming `children`.
  static func conversation(id: String, children: String, currentNode: String = "null") -> String {
    """
    {"id": "\(id)", "title": "t", "create_time": 1700000000, "current_node": \(currentNode), "mapping": {
      "root": {"id": "root", "parent": null, "children": ["u1"], "message": null},
      "u1": {"id": "u1", "parent": "root", "children": ["a1"], "message": {"author": {"role": "user"},
        "create_time": 1700000001, "content": {"content_type": "text", "parts": ["Where is the \(id) key?"]}}},
      "a1": {"id": "a1", "parent": "u1", "children": \(children), "message": {"author": {"role": "assistant"},
        "create_time": 1700000002, "content": {"content_type": "text", "parts": ["Under the \(id) mat."]}}}
    }}
    """
  }

  @Test func aChatGPTConversationWithADanglingChildKeepsItsTurnsWithANote() async throws {
    let folder = try TemporaryFolder()
    let path = folder.path("conversations.json")
    let sound = Self.conversation(id: "sound", children: "[]")
    let dangling = Self.conversation(id: "dangling", children: "[\"ghost\"]")
    try writeFile("[\(sound),\n\(dangling)]", to: path)
    let engine = try MemoryEngine(path: folder.path("m.sqlite"), configuration: hashingConfiguration())
    defer { engine.close() }
    let report = try await engine.conversation.ingest(path: path)
    #expect(report.format == .chatgpt)
    #expect(report.turns == 4)
    #expect(report.sessions == 2)
    #expect(
      report.warnings == [
        .danglingNode(
          path: path, conversation: 2, session: "chatgpt/dangling", node: "a1", reference: "ghost",
          relation: .child)
      ])
    #expect(report.warnings.first?.description.contains("conversation 2 (chatgpt/dangling)") == true)
    let hits = try await engine.search("dangling mat", k: 5, mode: .keyword, recordAccess: false)
    #expect(hits.map(\.text).contains("Under the dangling mat."))
  }

  @Test func aDanglingParentOrCurrentNodeIsSkippedWithANote() throws {
    // The current node is not in the mapping: the branch ending at the latest message is read.
    let missingCurrent = Self.conversation(id: "c", children: "[]", currentNode: "\"gone\"")
    let file = try ConversationFile.parse(
      Data("[\(missingCurrent)]".utf8), path: "x", defaultSession: "x", options: IngestOptions())
    #expect(file.sessions.first?.turns.map(\.content) == ["Where is the c key?", "Under the c mat."])
    #expect(
      file.sessions.first?.warnings.first.map {
        if case .danglingNode(_, _, _, nil, "gone", .currentNode) = $0 { true } else { false }
      } == true)
    // A node whose parent is missing starts its branch.
    let orphan = """
      [{"id": "a", "current_node": "x", "mapping": {"x": {"parent": "gone", "children": [],
        "message": {"author": {"role": "user"}, "content": {"parts": ["orphaned question"]}}}}}]
      """
    let parsed = try ConversationFile.parse(
      Data(orphan.utf8), path: "x", defaultSession: "x", options: IngestOptions())
    #expect(parsed.sessions.first?.turns.map(\.content) == ["orphaned question"])
    #expect(
      parsed.sessions.first?.warnings == [
        .danglingNode(
          path: "x", conversation: 1, session: "chatgpt/a", node: "x", reference: "gone", relation: .parent)
      ])
  }

  @Test func aFolderIsNeverReadOutsideItselfAndItsInnerLinksOnce() async throws {
    let folder = try TemporaryFolder()
    let manager = FileManager.default
    for path in ["notes/sub", "outside/deep"] {
      try manager.createDirectory(atPath: folder.path(path), withIntermediateDirectories: true)
    }
    try writeFile("# Inside\n\nThe spare key is in the blue pot.\n", to: folder.path("notes/sub/inside.md"))
    try writeFile(#"{"role": "user", "content": "outside chat"}"# + "\n", to: folder.path("outside/chat.txt"))
    try writeFile("# Secret\n\nThe outside secret.\n", to: folder.path("outside/secret.md"))
    try writeFile("# Deep\n\nThe outside deep note.\n", to: folder.path("outside/deep/deep.md"))
    let links = [
      ("notes/chat.txt", "../outside/chat.txt"), ("notes/passwd.txt", "/etc/passwd"),
      ("notes/secret.md", "../outside/secret.md"), ("notes/linked", "../outside"),
      ("notes/again", "sub"), ("notes/sub/loop", ".."), ("notes/inside-again.md", "sub/inside.md"),
    ]
    for (link, target) in links {
      try manager.createSymbolicLink(atPath: folder.path(link), withDestinationPath: target)
    }
    let root = folder.path("notes")
    let listing = IngestFolder.listing(root)
    // The notes are read (the folder itself); no export file is left.
    #expect(listing.entries == [root])
    #expect(
      Set(listing.warnings.map(\.description)) == [
        "skipped \(root)/chat.txt: a link to \(folder.url.resolvingSymlinksInPath().path)/outside/chat.txt, outside the folder",
        "skipped \(root)/passwd.txt: a link to /etc/passwd, outside the folder",
      ])
    #expect(NoteFolder.files(in: root).count == 1)
    let engine = try MemoryEngine(path: folder.path("m.sqlite"), configuration: hashingConfiguration())
    defer { engine.close() }
    let report = try await engine.conversation.ingest(path: root)
    #expect(report.memories == 1)
    let outside = report.warnings.filter {
      if case .linkOutsideFolder = $0 { return true } else { return false }
    }
    #expect(outside.map(\.description).sorted().map { $0.hasPrefix("skipped \(root)/") } == [true, true])
    for text in ["outside secret", "outside deep", "outside chat"] {
      #expect(try await engine.search(text, k: 3, mode: .keyword, recordAccess: false).isEmpty)
    }
  }
}

/// Issue 46: one huge turn made every search that found it as slow as its size (a 200 MB turn
/// never returned). A turn is bounded where it enters: longer texts are stored as ordered
/// parts that search finds and that join back byte for byte; a memory that long is refused.
@Suite(.timeLimit(.minutes(5)), .watchdog) struct TurnLimitTests {
  @Test func partsAreBoundedCutBetweenScalarsAndJoinBackByteForByte() {
    let unbroken = String(repeating: "é漢🙂a", count: 40_000)  // 10 bytes each, no white space
    let lines = (0..<9_000).map { "line \($0) of the log" }.joined(separator: "\n")
    for text in [unbroken, lines, "short"] {
      let parts = TurnText.parts(text)
      #expect(parts.joined() == text)
      #expect(Array(parts.joined().utf8) == Array(text.utf8))
      #expect(parts.allSatisfy { $0.utf8.count <= TurnText.maxBytes && !$0.isEmpty })
      // Each part but the last is at least three quarters full.
      #expect(parts.dropLast().allSatisfy { $0.utf8.count >= TurnText.maxBytes * 3 / 4 - 4 })
    }
    // A part of lines ends after a line break.
    #expect(TurnText.parts(lines).dropLast().allSatisfy { $0.hasSuffix("\n") })
  }

  @Test func aHugeIngestedTurnIsStoredAsPartsThatSearchFindsAndTheExportJoins() async throws {
    let folder = try TemporaryFolder()
    let words = (0..<30_000).map { "word\($0 % 997)" }.joined(separator: " ")
    let huge = "The zebra opened the log. " + words + " The log ends with a quokka."
    let line = JSONValue.object(["role": "user", "content": .string(huge), "session": "s"]).jsonText
    let small = JSONValue.object(["role": "assistant", "content": "noted", "session": "s"]).jsonText
    let path = folder.path("huge.jsonl")
    try writeFile(line + "\n" + small + "\n", to: path)
    let engine = try MemoryEngine(path: folder.path("m.sqlite"), configuration: hashingConfiguration())
    defer { engine.close() }
    let expected = TurnText.parts(huge).count
    #expect(expected == 4)
    let report = try await engine.conversation.ingest(path: path)
    #expect(report.turns == expected + 1)
    // Ingesting it again adds nothing.
    #expect(try await engine.conversation.ingest(path: path).turns == 0)
    for (word, part) in [("zebra", 1), ("quokka", expected)] {
      let hit = try #require(try await engine.search(word, k: 1, mode: .keyword, recordAccess: false).first)
      #expect(hit.metadata["part"] == .int(part))
      #expect(hit.metadata["parts"] == .int(expected))
      #expect(hit.text.utf8.count <= TurnText.maxBytes)
    }
    // The export holds the parts in order: joined, they are the turn byte for byte.
    let exported = folder.path("export.jsonl")
    _ = try await engine.transfer.export(to: exported)
    var parts: [(number: Int, text: String)] = []
    for line in try String(contentsOfFile: exported, encoding: .utf8).split(separator: "\n") {
      let object = try JSONValue.parse(line).objectValue ?? [:]
      guard object["type"] == "message", let metadata = object["metadata"]?.stringValue,
        let number = try JSONValue.parse(metadata)["part"]?.intValue,
        let text = object["content"]?.stringValue
      else { continue }
      parts.append((number, text))
    }
    #expect(parts.map(\.number) == Array(1...expected))
    #expect(Array(parts.map(\.text).joined().utf8) == Array(huge.utf8))
  }

  @Test func anAppendedTurnIsStoredInPartsAndALongMemoryIsRefused() async throws {
    let folder = try TemporaryFolder()
    let engine = try MemoryEngine(path: folder.path("m.sqlite"), configuration: hashingConfiguration())
    defer { engine.close() }
    let text = String(repeating: "the heron waits by the weir. ", count: 6_000)  // 174,000 bytes
    let first = try await engine.conversation.appendTurn(role: "user", content: text)
    let turns = try await engine.conversation.recentTurns(limit: 10)
    #expect(turns.count == 3)
    #expect(turns.first?.id == first)
    #expect(turns.map(\.text).joined() == text)
    #expect(turns.map { $0.metadata["part"] } == [.int(1), .int(2), .int(3)])
    let hits = try await engine.search("heron weir", k: 5, mode: .hybrid, recordAccess: false)
    #expect(Set(hits.map(\.id)) == Set(turns.map(\.id)))
    await #expect(throws: EngramError.textTooLong(bytes: text.utf8.count, limit: TurnText.maxBytes)) {
      try await engine.memories.remember(text)
    }
    #expect(try await engine.memories.list().isEmpty)
  }

  /// The re-ranker's coverage reads a long hit without building its set of terms, and counts
  /// exactly what the set did.
  @Test func theRerankersTermMatcherCountsAsTheTermSetDid() {
    let queries = [
      "When did Ann go climbing with friends?", "周末攀岩 dentist", "walking walked walks",
      "Caroline's LGBTQ group",
    ]
    let texts = [
      ("Ann's friends went climbing 周末攀岩 last weekend", "Ann"), ("", "Caroline"),
      ("She walked to the dentist; the group met.", ""),
      (String(repeating: "nothing to see here ", count: 4_000) + "climbing", "Bob"),
    ]
    for query in queries {
      let terms = Tokenizer.indexTerms(query, droppingStopwords: true)
      var matcher = Reranker.TermMatcher(terms)
      for (text, speaker) in texts {
        let expected = terms.intersection(Tokenizer.indexTerms(text + " " + speaker)).count
        #expect(matcher.found(in: text, and: speaker) == expected, "\(query) in \(text.prefix(40))")
      }
    }
  }

  @Test func deeplyNestedJSONIsToldAsTooDeepNotInvalid() throws {
    let deep = String(repeating: "[", count: 100_000) + String(repeating: "]", count: 100_000)
    #expect(throws: Never.self) {
      try JSONValue.parse(String(repeating: "[", count: 500) + String(repeating: "]", count: 500))
    }
    do {
      _ = try JSONValue.parse(deep)
      Issue.record("parsed")
    } catch {
      #expect(error.tooDeepAt == JSONValue.maxNesting)
    }
    for text in [deep + "\n", #"{"role": "user", "content": "x", "metadata": {"a": "# + deep + "}}\n"] {
      #expect {
        try ConversationFile.parse(Data(text.utf8), path: "deep.jsonl", defaultSession: "d")
      } throws: { error in
        guard case .malformed(_, 1, let reason) = error as? ImportError else { return false }
        return reason.contains("more than 512 levels deep") && !reason.contains("invalid")
      }
    }
  }
}

/// A line longer than the reader's block is scanned for its end once, not once per block
/// read, and the lines after it are read as before.
@Suite(.timeLimit(.minutes(5)), .watchdog) struct LongLineReaderTests {
  @Test func aLineSpanningManyBlocksAndTheLinesAroundItAreReadWhole() throws {
    let folder = try TemporaryFolder()
    let long = String(repeating: "abcdefgh", count: 3 << 17)  // 3 MiB
    let path = folder.path("lines.txt")
    try writeFile("first\n\(long)\nthird\nfourth", to: path)
    let reader = try ExportLineReader(path: path)
    var lines: [String] = []
    while try reader.nextLine(path: path, { lines.append(String(decoding: $0, as: UTF8.self)) }) {}
    #expect(lines == ["first\n", long + "\n", "third\n", "fourth"])
    #expect(reader.lineNumber == 4)
  }
}
