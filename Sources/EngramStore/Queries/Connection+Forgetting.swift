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

// Named queries of forgetting (maintenance).
extension Connection {
  /// Deletes an item with its embedding and full-text entry, and every copy of it the
  /// memory holds (docs/forgetting.md); returns what was removed, or nil when no item of
  /// `kind` has `id`. Run it inside a write transaction.
  public func forgetItem(kind: ItemKind, id: Int64) throws
    -> ForgetReport?
  {
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
    if let needle, !needle.isEmpty {
      let escaped = String(JSONValue.string(needle).jsonText.dropFirst().dropLast())
      let arguments: [SQLValue] = [.text(needle), .text(escaped), .text(user)]
      let turns = try prepare(
        "SELECT id FROM messages WHERE user_id = ?2 AND instr(lower(content), lower(?1)) > 0"
      )
      .bindingAndMap([.text(needle), .text(user)]) { $0.int64(at: 0) }
      deletedTurns.append(contentsOf: turns)
      report.turns = turns
      summaries.formUnion(
        try prepare("SELECT id FROM summaries WHERE user_id = ?2 AND instr(lower(content), lower(?1)) > 0")
          .bindingAndMap([.text(needle), .text(user)]) { $0.int64(at: 0) })
      try run(
        """
        DELETE FROM traces WHERE user_id = ?3 AND (
          instr(lower(arguments), lower(?1)) > 0 OR instr(lower(arguments), lower(?2)) > 0
          OR instr(lower(coalesce(result, '')), lower(?1)) > 0 OR instr(lower(coalesce(error, '')), lower(?1)) > 0)
        """, arguments)
      report.traces = changes
      try run(
        """
        DELETE FROM pending_calls WHERE user_id = ?3 AND status NOT IN ('pending', 'confirmed') AND (
          instr(lower(arguments), lower(?1)) > 0 OR instr(lower(arguments), lower(?2)) > 0
          OR instr(lower(summary), lower(?1)) > 0 OR instr(lower(coalesce(error, '')), lower(?1)) > 0)
        """, arguments)
      report.pendingCalls = changes
    }
    // Summaries derived from a deleted turn: the one covering it and any quoting it.
    for turn in deletedTurns {
      summaries.formUnion(
        try prepare(
          """
          SELECT summary_id FROM messages WHERE id = ?1 AND user_id = ?2 AND summary_id IS NOT NULL
          UNION SELECT s.id FROM summaries s, json_each(s.structured, '$.quoted_message_ids') q
            WHERE s.user_id = ?2 AND q.value = ?1
          UNION SELECT id FROM summaries WHERE user_id = ?2 AND (first_message_id = ?1 OR last_message_id = ?1)
          """
        ).bindingAndMap([.integer(turn), .text(user)]) { $0.int64(at: 0) })
    }
    for turn in deletedTurns { _ = try delete(Message.self, id: turn) }
    report.summaries = summaries.sorted()
    for summary in report.summaries { _ = try delete(Summary.self, id: summary) }
    return report
  }
}
