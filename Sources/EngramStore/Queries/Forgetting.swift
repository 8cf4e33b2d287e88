import EngramCore
import Foundation

/// What forgetting removed: the item and every copy of it (see
/// the engine's `forgetReporting(kind:id:dryRun:)`).
public struct ForgetReport: Sendable, Equatable {
  /// The kind of the item forgotten.
  public var kind: ItemKind
  /// Its id.
  public var id: Int64
  /// Turns deleted because they contain a forgotten memory's text.
  public var turns: [Int64] = []
  /// Summaries deleted because they covered, quoted or contained what was forgotten.
  public var summaries: [Int64] = []
  /// Trace steps deleted because their arguments, result or error held the text.
  public var traces = 0
  /// Finished pending calls deleted because their arguments, summary or error held the text.
  public var pendingCalls = 0

  /// Creates an empty report for an item.
  public init(kind: ItemKind, id: Int64) {
    self.kind = kind
    self.id = id
  }

  /// Whether copies were removed besides the item itself.
  public var removedCopies: Bool { !turns.isEmpty || !summaries.isEmpty || traces > 0 || pendingCalls > 0 }
}

// Named queries of forgetting (maintenance), written once for every store.
extension ForgettingQueries {
  /// Deletes an item with its embedding and full-text entry, and every copy of it the
  /// memory holds (docs/forgetting.md); returns what was removed, or nil when no item of
  /// `kind` has `id`. Run it inside a write transaction.
  public func forgetItem(kind: ItemKind, id: Int64) throws -> ForgetReport? {
    var report = ForgetReport(kind: kind, id: id)
    var deletedTurns: [Int64] = []
    var needle: String?
    switch kind {
    case .memory:
      guard let memory = try fetch(Memory.self, id: id) else { return nil }
      needle = memory.content.trimmingCharacters(in: .whitespacesAndNewlines)
      _ = try delete(Memory.self, id: id)
    case .message:
      guard try fetch(Message.self, id: id) != nil else { return nil }
      deletedTurns.append(id)
    case .summary:
      guard try delete(Summary.self, id: id) else { return nil }
    }
    var summaries = Set<Int64>()
    let sql = dialect
    if let needle, !needle.isEmpty {
      // The text as it stands inside a JSON string (the arguments of traces and calls).
      let escaped = String(JSONValue.string(needle).jsonText.dropFirst().dropLast())
      let arguments: [SQLValue] = [.text(needle), .text(escaped)]
      /// `column` holds the text (case aside), or its JSON-escaped form when `json`.
      func holds(_ column: String, json: Bool = false) -> String {
        let text = json ? sql.jsonText(column) : column
        let plain = sql.contains("lower(\(text))", "lower($2)")
        return json ? "\(plain) OR \(sql.contains("lower(\(text))", "lower($3)"))" : plain
      }
      let turns = try rows(
        scoped: "SELECT id FROM messages WHERE \(sql.user) = $1 AND \(holds("content"))", [.text(needle)]
      ) { $0.int64(at: 0) }
      deletedTurns.append(contentsOf: turns)
      report.turns = turns
      summaries.formUnion(
        try rows(
          scoped: "SELECT id FROM summaries WHERE \(sql.user) = $1 AND \(holds("content"))", [.text(needle)]
        ) { $0.int64(at: 0) })
      report.traces = try execute(
        scoped: """
          DELETE FROM traces WHERE \(sql.user) = $1 AND (\(holds("arguments", json: true))
            OR \(holds("coalesce(result, '')")) OR \(holds("coalesce(error, '')")))
          """, arguments)
      report.pendingCalls = try execute(
        scoped: """
          DELETE FROM pending_calls WHERE \(sql.user) = $1 AND status NOT IN ('pending', 'confirmed') AND (
            \(holds("arguments", json: true)) OR \(holds("summary")) OR \(holds("coalesce(error, '')")))
          """, arguments)
    }
    // Summaries derived from a deleted turn: the one covering it and any quoting it.
    for turn in deletedTurns {
      summaries.formUnion(
        try rows(
          scoped: """
            SELECT summary_id FROM messages WHERE \(sql.user) = $1 AND id = $2 AND summary_id IS NOT NULL
            UNION SELECT s.id FROM summaries s WHERE s.\(sql.user) = $1 AND \(sql.summary("s", quotesTurn: "$2"))
            UNION SELECT id FROM summaries WHERE \(sql.user) = $1 AND (first_message_id = $2 OR last_message_id = $2)
            """, [.integer(turn)]
        ) { $0.int64(at: 0) })
    }
    for turn in deletedTurns { _ = try delete(Message.self, id: turn) }
    report.summaries = summaries.sorted()
    for summary in report.summaries { _ = try delete(Summary.self, id: summary) }
    return report
  }
}
