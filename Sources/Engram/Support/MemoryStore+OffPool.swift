import EngramCore
import EngramStore

// The store's transactions block their thread (SQLite statements, libpq round trips). The
// engine's topic types are async and run them here, on `BlockingWork`'s threads, so no caller
// wraps a topic call in `BlockingWork.run` and no cooperative thread waits on the database.
extension MemoryStore {
  /// A read transaction run off the cooperative pool, after checking that the engine is open.
  /// - Throws: `EngramError.closed`; what `body` and the store throw.
  func readOffPool<T: Sendable>(
    _ open: OpenState, _ body: @escaping @Sendable (any StoreSession) throws -> T
  ) async throws -> T {
    try await StoreRole(self) { $0 }.readOffPool(open, body)
  }

  /// A write transaction run off the cooperative pool, after checking that the engine is open.
  /// - Throws: `EngramError.closed`; what `body` and the store throw.
  func writeOffPool<T: Sendable>(
    _ open: OpenState, _ body: @escaping @Sendable (any StoreSession) throws -> T
  ) async throws -> T {
    try await StoreRole(self) { $0 }.writeOffPool(open, body)
  }
}

extension StoreRole {
  /// A read transaction on the role, run off the cooperative pool, after checking that the
  /// engine is open.
  /// - Throws: `EngramError.closed`; what `body` and the store throw.
  func readOffPool<T: Sendable>(
    _ open: OpenState, _ body: @escaping @Sendable (Role) throws -> T
  ) async throws -> T {
    try open.check()
    return try await BlockingWork.run { try self.readTransaction(body) }
  }

  /// A write transaction on the role, run off the cooperative pool, after checking that the
  /// engine is open.
  /// - Throws: `EngramError.closed`; what `body` and the store throw.
  func writeOffPool<T: Sendable>(
    _ open: OpenState, _ body: @escaping @Sendable (Role) throws -> T
  ) async throws -> T {
    try open.check()
    return try await BlockingWork.run { try self.writeTransaction(body) }
  }
}
