import EngramCore
import EngramStore
import EngramVectors
import Foundation

/// Forgets items with every copy of them, and the memories a query names.
struct Forgetting: Sendable {
  let open: OpenState
  /// Deletes in a tracked write and drops the index's rows.
  let vectors: VectorIndexKeeper
  /// Forgotten when a turn goes.
  let speakers: SpeakerDirectory
  /// Finds what a query names.
  let retriever: HybridRetriever

  /// Deletes an item and every copy of it (see ``forgetReporting(kind:id:dryRun:)``);
  /// returns whether it existed.
  @discardableResult
  func forget(kind: ItemKind = .memory, id: Int64) throws -> Bool {
    try forgetReporting(kind: kind, id: id) != nil
  }

  /// Deletes an item with its embedding and full-text entry, and every copy of it the
  /// memory holds, in one transaction (see `MemoryEngine.Memories.forgetReporting(kind:id:dryRun:)`).
  @discardableResult
  func forgetReporting(kind: ItemKind, id: Int64, dryRun: Bool = false) throws -> ForgetReport? {
    try open.check()
    let report: ForgetReport?
    do {
      report = try vectors.writeTracked { connection -> ForgetReport? in
        guard let report = try connection.forgetItem(kind: kind, id: id) else { return nil }
        if dryRun { throw ForgetDryRun(report: report) }
        return report
      }
    } catch let preview as ForgetDryRun {
      return preview.report
    }
    guard let report else { return nil }
    vectors.remove(
      ids: [VectorKey.make(kind, id)] + report.turns.map { VectorKey.make(.message, $0) }
        + report.summaries.map { VectorKey.make(.summary, $0) })
    if kind == .message || !report.turns.isEmpty { speakers.invalidate() }
    return report
  }

  private struct ForgetDryRun: Error {
    var report: ForgetReport
  }

  /// Forgets the items matching a query (keyword and vector, fused) that the query actually
  /// names (`Fusion.names`); with `dryRun` nothing is deleted. Returns what matched.
  func forget(matching query: String, kinds: Set<ItemKind>, limit: Int, dryRun: Bool) async throws
    -> [SearchHit]
  {
    let hits = try await retriever.search(
      query, k: limit, mode: .hybrid, filters: SearchFilters(kinds: kinds), recordAccess: true, exact: false)
    // Only items the query actually names (the rule lives with the ranking, in `Fusion`).
    let matched = hits.filter { Fusion.names($0, query: query) }
    if !dryRun {
      for hit in matched { try forget(kind: hit.kind, id: hit.id) }
    }
    return matched
  }
}
