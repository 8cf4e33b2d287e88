import Engram
import EngramEmbeddings
import EngramHTTP
import EngramMCP
import EngramTestSupport
import Foundation
import Testing

@testable import EngramCLI

/// One reminder delivery for every front end (issue 48, item 6): the web app and an MCP client
/// asking at the same moment, each through its own engine on the same memory (as two
/// processes would), get every due reminder exactly once between them.
@Suite(.timeLimit(.minutes(5)), .watchdog) struct ReminderDeliveryFrontEndsTests {
  @Test func theWebAppAndMCPDeliverEachDueReminderOnce() async throws {
    let scratch = try ScratchFolder()
    let path = scratch.path("m.sqlite")
    let web = try MemoryEngine(
      path: path, configuration: EngramConfiguration(embedder: try HashingEmbedder(dimension: 64)))
    let mcp = try MemoryEngine(
      path: path, configuration: EngramConfiguration(embedder: try HashingEmbedder(dimension: 64)))
    let start = Date().addingTimeInterval(-600)
    var ids: [Int] = []
    for number in 0..<30 {
      ids.append(
        Int(
          try await web.agentRecords.addItem(
            kind: .reminder, title: "reminder \(number)", due: start.addingTimeInterval(Double(number)))))
    }
    let later = try await web.agentRecords.addItem(
      kind: .reminder, title: "not yet", due: Date().addingTimeInterval(3600))
    let app = WebAPITests.app(web)
    let provider = EngineToolProvider(engine: mcp)

    async let fromWeb = app.respond(to: WebAPITests.post("/api/reminders/due"))
    async let fromMCP = provider.call(name: "reminders_deliver", arguments: [:])
    let webResponse = await fromWeb
    #expect(webResponse.status == 200)
    let webIDs =
      try WebAPITests.json(webResponse)["reminders"]?.arrayValue?.compactMap { $0["id"]?.intValue } ?? []
    let mcpResult = try await fromMCP
    let mcpIDs =
      mcpResult.structuredContent?["reminders"]?.arrayValue?.compactMap { $0["id"]?.intValue } ?? []

    #expect(Set(webIDs).isDisjoint(with: mcpIDs), "web \(webIDs), mcp \(mcpIDs)")
    #expect((webIDs + mcpIDs).sorted() == ids)

    // Asked again by either, nothing is due; the one not due yet stays undelivered.
    let again = try await provider.call(name: "reminders_deliver", arguments: [:])
    #expect(again.structuredContent?["reminders"] == [])
    let webAgain = try WebAPITests.json(await app.respond(to: WebAPITests.post("/api/reminders/due")))
    #expect(webAgain["reminders"] == [])
    #expect(try await web.agentRecords.item(later)?.deliveredAt == nil)
    for id in ids { #expect(try await web.agentRecords.item(Int64(id))?.deliveredAt != nil) }
  }

  /// `memory_agenda` stays read-only: listing due reminders does not deliver them.
  @Test func theAgendaToolDoesNotDeliver() async throws {
    let scratch = try ScratchFolder()
    let engine = try MemoryEngine(
      path: scratch.path("m.sqlite"),
      configuration: EngramConfiguration(embedder: try HashingEmbedder(dimension: 64)))
    let id = try await engine.agentRecords.addItem(
      kind: .reminder, title: "water the ferns", due: Date().addingTimeInterval(-60))
    let provider = EngineToolProvider(engine: engine)
    let listed = try await provider.call(name: "memory_agenda", arguments: ["from": "2000-01-01"])
    #expect(listed.structuredContent?["items"]?.arrayValue?.count == 1)
    #expect(try await engine.agentRecords.item(id)?.deliveredAt == nil)
    let delivered = try await provider.call(name: "reminders_deliver", arguments: [:])
    #expect(delivered.structuredContent?["reminders"]?[0]?["title"] == "water the ferns")
    guard case .text(let text)? = delivered.content.first else {
      Issue.record("no text block")
      return
    }
    #expect(text.contains("water the ferns"))
    #expect(try await engine.agentRecords.item(id)?.deliveredAt != nil)
  }
}
