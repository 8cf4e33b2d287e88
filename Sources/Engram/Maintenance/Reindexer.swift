import EngramCore
import EngramStore
import Foundation

/// Re-embeds a whole memory with another embedder and switches its model in one
/// transaction, catching up with writers that change it meanwhile.
enum Reindexer {
  /// Re-embeds everything in the memory at `path` with `configuration.embedder` and switches
  /// the database's model in one transaction (all or nothing), then opens it.
  ///
  /// The old model is not needed: texts are read from the store.
  ///
  /// - Parameter embedderSpec: when given, recorded as `meta.embedder_spec` in the same
  ///   transaction as the new vectors, so a crash can never leave vectors of one model with
  ///   the spec of the other (a tool reopening the file would then refuse it).
  /// - Throws: `EngramError.emptyText` for a blank `embedderSpec` (nothing changed); embedder
  ///   and store errors.
  static func reindex(
    path: String, configuration: EngramConfiguration, embedderSpec: String? = nil,
    progress: (@Sendable (EngramProgress) -> Void)? = nil
  ) async throws -> MemoryEngine {
    try configuration.validate()
    if let embedderSpec, TextChecks.isBlank(embedderSpec) {
      throw EngramError.emptyText
    }
    var options = StoreFactory.Options()
    options.busyTimeout = configuration.busyTimeout
    options.user = configuration.user
    let store = try StoreFactory.open(StoreLocation(parsing: path), options: options)
    defer { store.close() }
    let others = try store.readTransaction { try $0.storedUsers() }.filter { $0 != store.user }
    guard others.isEmpty else { throw EngramError.reindexNeedsEveryUser(users: others) }
    let embedder = configuration.embedder
    // Texts already embedded with the new model, by owner. Another process may add, change
    // or delete items while the embedder runs: after embedding, the items are read again and
    // whatever is new or changed is embedded too, and the final transaction checks, holding
    // the write lock, that nothing moved since; otherwise it rolls back and catches up again.
    var embedded: [ReindexKey: (text: String, vector: [Float])] = [:]
    var total = 0
    for _ in 0..<Self.reindexCatchUpRounds {
      let items = try store.readTransaction { try reindexItems($0) }
      let missing = items.filter { embedded[ReindexKey($0.0, $0.1)]?.text != $0.2 }
      if !missing.isEmpty {
        total = max(total, items.count)
        var start = 0
        while start < missing.count {
          if Task.isCancelled { throw EngramError.cancelled }
          let end = min(start + configuration.embeddingBatchSize, missing.count)
          let part = try await embedder.embed(missing[start..<end].map(\.2))
          guard part.count == end - start else {
            throw EngramError.embedderContract(expected: end - start, actual: part.count)
          }
          try EmbeddingRunner.check(part, dimension: embedder.dimension, offset: start)
          for (offset, vector) in part.enumerated() {
            let item = missing[start + offset]
            embedded[ReindexKey(item.0, item.1)] = (item.2, vector)
          }
          start = end
          progress?(
            EngramProgress(phase: "embedding", done: items.count - missing.count + start, total: items.count))
        }
      }
      let now = Date()
      let written = try store.writeTransaction { connection -> Int? in
        let current = try reindexItems(connection)
        guard current.allSatisfy({ embedded[ReindexKey($0.0, $0.1)]?.text == $0.2 }) else { return nil }
        try connection.configureEmbeddingModel(
          model: embedder.modelID, dimension: embedder.dimension, replace: true)
        try connection.deleteAllEmbeddings()
        if let embedderSpec { try connection.setMeta(EmbedderSpec.metaKey, embedderSpec) }
        for item in current {
          try connection.upsertEmbedding(
            EmbeddingRow(
              ownerKind: item.0, ownerID: item.1, model: embedder.modelID,
              vector: embedded[ReindexKey(item.0, item.1)]!.vector, createdAt: now))
        }
        return current.count
      }
      if let written {
        total = written
        if let snapshot = store.vectorSnapshotURL { try? FileManager.default.removeItem(at: snapshot) }
        store.close()
        progress?(EngramProgress(phase: "done", done: total, total: total))
        return try MemoryEngine(path: path, configuration: configuration)
      }
    }
    throw EngramError.changedDuringReindex(rounds: Self.reindexCatchUpRounds)
  }

  /// How many times a reindex catches up with other writers before it gives up.
  static let reindexCatchUpRounds = 16

  /// An owner of an embedding.
  struct ReindexKey: Hashable {
    var kind: ItemKind
    var id: Int64
    init(_ kind: ItemKind, _ id: Int64) {
      self.kind = kind
      self.id = id
    }
  }

  /// Every message, memory and summary with the text its embedding is made from.
  static func reindexItems(_ connection: any MaintenanceQueries) throws -> [(ItemKind, Int64, String)] {
    try connection.embeddableItems().map { ($0.kind, $0.id, DocumentText.make($0)) }
  }
}
