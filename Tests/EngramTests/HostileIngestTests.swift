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
