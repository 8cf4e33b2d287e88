import EngramStore

extension MemoryEngine {
  /// Whether a memory exists at `location` (a SQLite file that holds Engram's schema, or a
  /// PostgreSQL database that does), found without creating or changing anything.
  /// - Throws: `StoreError.invalidLocation`, `StoreError.schemaTooNew`, the store's open errors.
  public static func memoryExists(at location: String) throws -> Bool {
    try StoreFactory.inspect(StoreLocation(parsing: location)) { _ in true } ?? false
  }
}
