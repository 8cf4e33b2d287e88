import EngramCore
import EngramStore

extension VectorIndexKeeper {
  /// `writeTracked` run off the cooperative pool, for async operations.
  func writeTrackedOffPool<T: Sendable>(_ body: @escaping @Sendable (any StoreSession) throws -> T)
    async throws -> T
  {
    try await BlockingWork.run { try self.writeTracked(body) }
  }
}
