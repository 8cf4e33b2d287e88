import EngramCore
import EngramTestSupport
import Testing

@testable import EngramStore

@Suite(.timeLimit(.minutes(5)), .watchdog) struct SearchTests {
  private func seeded() throws -> (TemporaryDirectory, Connection, [String: Int64]) {
    let directory = try TemporaryDirectory()
    let connection = try makeMigratedConnection(directory)
    let session = try connection.insert(Session(title: "s", startedAt: t0))
    var ids: [String: Int64] = [:]
    let texts = [
      "meeting": "明天下午三点开会",
      "climbing": "我周末去攀岩了",
      "running": "I was running along the river yesterday",
      "paris": "The Eiffel Tower in PARIS is tall",
      "cooking": "Cooking pasta with tomatoes and basil",
    ]
    var time = t0ms
    for (key, text) in texts.sorted(by: { $0.key < $1.key }) {
      time += 1000
      ids[key] = try connection.insert(
        Message(
          sessionID: key == "paris" ? session : nil, role: .user, content: text,
          createdAt: Timestamp.date(time)))
    }
    ids["session"] = session
    return (directory, connection, ids)
  }

  @Test(arguments: [
    ("开会", "meeting"), ("攀岩", "climbing"), ("下午三点", "meeting"), ("周末", "climbing"),
    ("run", "running"), ("runs", "running"), ("paris", "paris"), ("Tower", "paris"), ("TOMATO", "cooking"),
  ])
  func findsTheExpectedMessage(query: String, key: String) throws {
    let (directory, connection, ids) = try seeded()
    _ = directory
    let hits = try connection.searchText(query, kinds: [.message], limit: 5)
    #expect(hits.first?.ownerID == ids[key])
    #expect(hits.first?.ownerKind == .message)
    #expect((hits.first?.bm25 ?? 0) > 0)
  }

  @Test(arguments: [
    ("walked rivers", "running"), ("tomato", "cooking"), ("cooked", "cooking"), ("towers", "paris"),
  ])
  func stemsBothSides(query: String, key: String) throws {
    let (directory, connection, ids) = try seeded()
    _ = directory
    #expect(try connection.searchText(query, kinds: [.message], limit: 5).first?.ownerID == ids[key])
  }

  /// Two-character Chinese queries match the two characters side by side, not apart.
  @Test func twoCharacterChineseQueriesMatchTheWord() throws {
    let (directory, connection, ids) = try seeded()
    _ = directory
    let apart = try connection.insert(Message(role: .user, content: "攀登高岩石", createdAt: t0))
    #expect(try connection.searchText("攀岩", kinds: [.message]).map(\.ownerID) == [ids["climbing"]!])
    #expect(try connection.searchText("攀登", kinds: [.message]).map(\.ownerID) == [apart])
    #expect(try connection.searchText("周末", kinds: [.message]).map(\.ownerID) == [ids["climbing"]!])
  }

  /// Stopwords are indexed, so a quoted phrase that holds them matches only that phrase.
  @Test func phrasesWithStopwordsMatchInOrder() throws {
    let (directory, connection, _) = try seeded()
    _ = directory
    let phrase = try connection.insert(
      Message(role: .user, content: "The offer came out of the blue", createdAt: t0))
    let scattered = try connection.insert(
      Message(role: .user, content: "Blue paint is out of stock at the shop", createdAt: t0))
    #expect(try connection.searchText(#""out of the blue""#, kinds: [.message]).map(\.ownerID) == [phrase])
    #expect(Set(try connection.searchText("blue", kinds: [.message]).map(\.ownerID)) == [phrase, scattered])
  }

  /// A turn is indexed with its UTC day; changing its time moves it to the new day.
  @Test func findsTurnsByTheirDay() throws {
    let (directory, connection, _) = try seeded()
    _ = directory
    let may8 = try connection.insert(
      Message(
        role: .user, speaker: "Ann", content: "We went kayaking", createdAt: Timestamp.date(1_557_323_760_000)
      ))
    #expect(try connection.searchText("8 May 2019", kinds: [.message]).first?.ownerID == may8)
    let memory = try connection.insert(
      Memory(kind: .fact, content: "Kayaks float", createdAt: Timestamp.date(1_557_323_760_000)))
    #expect(try connection.searchText("2019", kinds: [.memory]).isEmpty)
    #expect(try connection.searchText("kayak", kinds: [.memory]).map(\.ownerID) == [memory])
    var message = try #require(try connection.fetch(Message.self, id: may8))
    message.createdAt = Timestamp.date(1_557_323_760_000 + 3 * 86_400_000)
    try connection.update(message)
    #expect(try connection.searchText("2019", kinds: [.message]).map(\.ownerID) == [may8])
    #expect(try connection.searchText("11", kinds: [.message]).map(\.ownerID) == [may8])
    #expect(try connection.searchText("8", kinds: [.message]).isEmpty)
    #expect(try connection.ftsConsistency().allSatisfy(\.isConsistent))
    #expect(try connection.delete(Message.self, id: may8))
    #expect(try connection.searchText("2019", kinds: [.message]).isEmpty)
    #expect(try connection.ftsConsistency().allSatisfy(\.isConsistent))
  }

  @Test func ranksByNumberOfMatchingTerms() throws {
    let (directory, connection, ids) = try seeded()
    _ = directory
    let hits = try connection.searchText("pasta basil river", kinds: [.message], limit: 5)
    #expect(hits.count == 2)
    #expect(hits.first?.ownerID == ids["cooking"])
    #expect(hits[0].bm25 >= hits[1].bm25)
  }

  @Test func filtersBySessionAndTime() throws {
    let (directory, connection, ids) = try seeded()
    _ = directory
    let inSession = try connection.searchText("paris tower running", limit: 5, sessionID: ids["session"])
    #expect(inSession.map(\.ownerID) == [ids["paris"]!])
    let message = try #require(try connection.fetch(Message.self, id: ids["running"]!))
    let inTime = try connection.searchText(
      "paris running", limit: 5,
      timeRange: Timestamp.milliseconds(message.createdAt)..<(Timestamp.milliseconds(message.createdAt) + 1))
    #expect(inTime.map(\.ownerID) == [ids["running"]!])
  }

  @Test func searchesMemoriesAndSummaries() throws {
    let (directory, connection, _) = try seeded()
    _ = directory
    let memory = try connection.insert(Memory(kind: .fact, content: "Alice likes climbing", createdAt: t0))
    let summary = try connection.insert(
      Summary(startAt: t0, endAt: t(1), content: "They talked about climbing gyms", createdAt: t0))
    let hits = try connection.searchText("climbing", kinds: [.memory, .summary], limit: 10)
    #expect(Set(hits.map(\.ownerKind)) == [.memory, .summary])
    #expect(Set(hits.map(\.ownerID)) == [memory, summary])
  }

  @Test func updatesAndDeletesKeepTheIndexInStep() throws {
    let (directory, connection, ids) = try seeded()
    _ = directory
    var message = try #require(try connection.fetch(Message.self, id: ids["paris"]!))
    message.content = "The Colosseum in Rome"
    try connection.update(message)
    #expect(try connection.searchText("Eiffel").isEmpty)
    #expect(try connection.searchText("Colosseum").map(\.ownerID) == [ids["paris"]!])
    try connection.delete(Message.self, id: ids["paris"]!)
    #expect(try connection.searchText("Colosseum").isEmpty)
    #expect(try connection.ftsConsistency().allSatisfy(\.isConsistent))
  }

  @Test(arguments: [
    "\"", "\"\"", "(", ")", "AND", "OR", "NOT", "NEAR", "NEAR(a b, 2)", "a AND", "OR OR OR", "*", "run*",
    "-paris", "body:paris", "messages_fts:paris", "^paris", "{body}: x", "a\"b", "'; DROP TABLE messages; --",
    "\u{0}", "🙂", "+", "paris -tower", "\"paris\" NOT \"tower\"", "rank:1", "col:\"x", "\\", "%", "_",
    String(repeating: "word ", count: 500),
  ])
  func hostileQueriesNeverThrow(query: String) throws {
    let (directory, connection, _) = try seeded()
    _ = directory
    let hits = try connection.searchText(query, limit: 10)
    #expect(hits.count <= 10)
    #expect(try connection.count(Message.self) == 5)
  }

  @Test func emptyQueriesReturnNothing() throws {
    let (directory, connection, _) = try seeded()
    _ = directory
    #expect(try connection.searchText("").isEmpty)
    #expect(try connection.searchText("?!... ---").isEmpty)
    #expect(try connection.searchText("paris", limit: 0).isEmpty)
  }

  /// FTS5's integrity-check is a write command: a read-only connection runs it on a private
  /// copy of the index, which passes when the index is sound and fails where a block is not.
  @Test func aReadOnlyConnectionChecksEveryBlock() throws {
    let (directory, writer, _) = try seeded()
    let path = directory.file("test.sqlite")
    let reader = try Connection(path: path, mode: .readOnly)
    #expect(reader.isReadOnly)
    #expect(try reader.ftsConsistency(deep: true).allSatisfy(\.isConsistent))
    // Damage one block of the messages' index behind FTS5's back.
    writer.setDefensive(false)
    try writer.execute(
      "UPDATE messages_fts_data SET block = zeroblob(length(block)) WHERE id = (SELECT max(id) FROM messages_fts_data)"
    )
    writer.setDefensive(true)
    let counted = try reader.ftsConsistency(deep: false)
    #expect(counted.allSatisfy { $0.isConsistent }, "the counts alone cannot see it")
    let checked = try reader.ftsConsistency(deep: true)
    #expect(checked.first { $0.table == "messages" }?.indexIntact == false)
    #expect(checked.filter { $0.table != "messages" }.allSatisfy { $0.isConsistent })
    // Checking wrote nothing: the reader's database is as it was, the check can run again.
    #expect(try reader.ftsConsistency(deep: true).first { $0.table == "messages" }?.indexIntact == false)
    try writer.rebuildFTS()
    #expect(try reader.ftsConsistency(deep: true).allSatisfy(\.isConsistent))
  }

  @Test func consistencyCheckAndRebuild() throws {
    let (directory, connection, _) = try seeded()
    _ = directory
    #expect(try connection.integrityCheck().isEmpty)
    // Break the index behind the triggers' back, then repair it.
    try connection.execute("INSERT INTO messages_fts (messages_fts) VALUES ('delete-all')")
    let broken = try connection.ftsConsistency().first { $0.table == "messages" }
    #expect(broken?.indexedRows == 0)
    #expect(broken?.sourceRows == 5)
    #expect(broken?.isConsistent == false)
    #expect(try connection.searchText("攀岩").isEmpty)
    try connection.rebuildFTS()
    #expect(try connection.ftsConsistency().allSatisfy(\.isConsistent))
    #expect(try connection.searchText("攀岩").count == 1)
  }
}
