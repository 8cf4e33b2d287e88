import EngramCore
import Foundation

// Named queries of the agent's records.
extension Connection {
  /// Agent items of `kind` whose due time lies in `due` (both ends optional: `from` inclusive,
  /// `to` exclusive), soonest first, at most `limit`; with `undeliveredOnly`, only those
  /// never delivered. Items without a due time are left out.
  public func agentItems(
    kind: AgentItemKind, dueFrom from: Date?, to: Date?, undeliveredOnly: Bool, limit: Int
  ) throws -> [AgentItem] {
    let statement = try cachedStatement(
      """
      SELECT \(AgentItem.selectList) FROM agent_items
      WHERE user_id = ?1 AND kind = ?2 AND due_at IS NOT NULL
        AND (?3 IS NULL OR due_at >= ?3) AND (?4 IS NULL OR due_at < ?4)
        AND (?5 = 0 OR delivered_at IS NULL)
      ORDER BY due_at, id LIMIT ?6
      """)
    try statement.bind(user, at: 1)
    try statement.bind(kind.rawValue, at: 2)
    try statement.bind(from, at: 3)
    try statement.bind(to, at: 4)
    try statement.bind(undeliveredOnly, at: 5)
    try statement.bind(limit, at: 6)
    return try statement.map { try AgentItem(row: $0) }
  }

  /// Marks reminder `id` delivered at `now` if it is due by then and was never delivered;
  /// returns it as it now is, or nil (another process claimed it first). Its own UPDATE ...
  /// WHERE delivered_at IS NULL, so two processes never claim one reminder.
  public func claimReminder(_ id: Int64, at now: Date) throws -> AgentItem? {
    let statement = try cachedStatement(
      """
      UPDATE agent_items SET delivered_at = ?1
      WHERE user_id = ?2 AND id = ?3 AND kind = 'reminder' AND delivered_at IS NULL
        AND due_at IS NOT NULL AND due_at <= ?1
      """)
    try statement.bind(now, at: 1)
    try statement.bind(user, at: 2)
    try statement.bind(id, at: 3)
    try statement.execute()
    guard changes > 0 else { return nil }
    return try fetch(AgentItem.self, id: id)
  }

  /// Undoes the claim of reminder `id` made at `claimedAt`: it is due again (and what its
  /// condition came to is forgotten).
  public func releaseReminder(_ id: Int64, claimedAt: Date) throws {
    let statement = try cachedStatement(
      """
      UPDATE agent_items SET delivered_at = NULL, condition_outcome = NULL
      WHERE user_id = ?1 AND id = ?2 AND delivered_at = ?3
      """)
    try statement.bind(user, at: 1)
    try statement.bind(id, at: 2)
    try statement.bind(claimedAt, at: 3)
    try statement.execute()
  }
}
