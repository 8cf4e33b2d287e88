import EngramStore

@testable import Engram

extension MemoryEngine {
  /// The SQLite store under an engine opened on a file, for tests that look at its SQL
  /// directly (the engine itself only knows `any MemoryStore`).
  var database: Database {
    guard let database = store as? Database else {
      preconditionFailure("the engine was not opened on a SQLite file")
    }
    return database
  }
}
