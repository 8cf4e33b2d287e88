/// A store seen through one role of its sessions (`ItemQueries`, `AgentRecordQueries`, ...):
/// for a part of the engine that uses that role alone. Its transactions hand the body the
/// role, not the whole `StoreSession`, so the part's type says what it reads and writes and
/// it cannot reach past it.
///
/// `StoreRole<any ItemQueries>(store) { $0 }` is the store's item queries.
public struct StoreRole<Role>: Sendable {
  /// The store whose sessions are seen.
  private let store: any MemoryStore
  /// The role of a session.
  private let role: @Sendable (any StoreSession) -> Role

  /// `store`'s sessions seen as `role` makes them (usually `{ $0 }`, an upcast).
  public init(_ store: any MemoryStore, _ role: @escaping @Sendable (any StoreSession) -> Role) {
    self.store = store
    self.role = role
  }

  /// `MemoryStore.readTransaction`, with the role.
  public func readTransaction<T: Sendable>(_ body: (Role) throws -> T) throws -> T {
    try store.readTransaction { try body(role($0)) }
  }

  /// `MemoryStore.writeTransaction`, with the role.
  public func writeTransaction<T: Sendable>(_ body: (Role) throws -> T) throws -> T {
    try store.writeTransaction { try body(role($0)) }
  }

  /// `MemoryStore.writeTransactionWithoutWaiting`, with the role.
  public func writeTransactionWithoutWaiting<T: Sendable>(_ body: (Role) throws -> T) throws -> T {
    try store.writeTransactionWithoutWaiting { try body(role($0)) }
  }
}
