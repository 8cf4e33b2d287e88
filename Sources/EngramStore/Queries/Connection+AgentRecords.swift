import EngramCore

// Named queries of the agent's records.
extension Connection {
  /// Agent items (of `kind` when given), in id order (oldest first), at most `limit`.
  public func agentItems(kind: AgentItemKind?, limit: Int) throws -> [AgentItem] {
    let statement = try cachedStatement(
      """
      SELECT \(AgentItem.selectList) FROM agent_items
      WHERE user_id = ?3 AND (?1 IS NULL OR kind = ?1) ORDER BY id LIMIT ?2
      """)
    try statement.bind(kind?.rawValue, at: 1)
    try statement.bind(limit, at: 2)
    try statement.bind(user, at: 3)
    return try statement.map { try AgentItem(row: $0) }
  }

  /// The most recent trace rows, newest first.
  public func recentTraces(limit: Int) throws -> [Trace] {
    let statement = try cachedStatement(
      "SELECT \(Trace.selectList) FROM traces WHERE user_id = ?2 ORDER BY id DESC LIMIT ?1")
    try statement.bind(limit, at: 1)
    try statement.bind(user, at: 2)
    return try statement.map { try Trace(row: $0) }
  }
}
