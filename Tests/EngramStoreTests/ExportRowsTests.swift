import EngramTestSupport
import Foundation
import Testing

@testable import EngramStore

/// Export streams rows in primary-key order: no table's rows are sorted in memory first
/// (issue 15: exporting 100,000 turns peaked at 206 MB, the embeddings sorted whole).
@Suite(.timeLimit(.minutes(5)), .watchdog) struct ExportRowsTests {
  @Test func noExportedTableIsSortedInMemory() throws {
    let directory = try TemporaryDirectory()
    let database = try Database(path: directory.file("db.sqlite"))
    defer { database.close() }
    let orders = [
      "sessions": "id", "messages": "id", "summaries": "id", "memories": "id", "embeddings": "id",
      "preferences": "key", "skill_state": "skill_id", "traces": "id", "pending_calls": "id",
      "agent_items": "id",
    ]
    #expect(Set(orders.keys) == perUserTables)
    try database.read { connection in
      for (table, order) in orders {
        let statement = try connection.exportRows(of: table, orderedBy: order)
        let plan = try connection.prepare("EXPLAIN QUERY PLAN " + statement.sql).map { $0.string(at: 3) }
        #expect(!plan.contains { $0.contains("TEMP B-TREE") }, "\(table): \(plan)")
      }
    }
  }
}
