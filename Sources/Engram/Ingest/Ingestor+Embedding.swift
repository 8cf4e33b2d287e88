import EngramCore
import EngramStore
import EngramVectors

extension Ingestor {
  /// Turns read back from the store to embed: their rows (nil for a turn forgotten meanwhile
  /// or embedded by another ingest since) and the texts their vectors are made of.
  struct StoredTurns: Sendable {
    var ids: [Int64]
    var rows: [Message?]
    var texts: [String]
  }

  /// Embeds the stored turns `ids` (in `embeddingBatch`es) and stores each batch's vectors
  /// in one transaction, then adds them to the vector index; returns how many of
  /// `leftByOthers` (turns an earlier ingest left unembedded) this ingest embedded.
  ///
  /// The batches flow through a pipeline of depth one: while batch n's vectors are committed
  /// and indexed (off the cooperative pool), batch n + 1 is read back and embedded, so the
  /// commit never waits for the next embedding and the embedder never waits for a commit
  /// unless it gets two batches ahead (then it waits: back-pressure, one batch of vectors in
  /// memory besides the one being computed). Commits stay in batch order. An error stops the
  /// pipeline: the batch whose commit failed is rolled back whole, the batch in flight when
  /// another step failed is committed whole or not at all, and nothing after it is stored.
  /// With `overlapsStoring` false each batch is committed before the next is read (the order
  /// of earlier versions; what is stored is the same).
  ///
  /// - Parameters:
  ///   - reused: vectors computed before the text was stored, for the first of `ids`, with
  ///     the texts they were made of (used where the stored turn gives the same text).
  func embedStored(
    _ ids: [Int64], leftByOthers: Set<Int64>, reused: [[Float]], reusedTexts: [String],
    progress: (@Sendable (EngramProgress) -> Void)?
  ) async throws -> Int {
    let batches = stride(from: 0, to: ids.count, by: Self.embeddingBatch).map {
      Array(ids[$0..<min($0 + Self.embeddingBatch, ids.count)])
    }
    return try await withThrowingTaskGroup(of: (completed: Int, count: Int).self) { group in
      var tally = Tally(total: ids.count, progress: progress)
      for (number, batch) in batches.enumerated() {
        if Task.isCancelled { throw EngramError.cancelled }
        let turns = try await readBack(batch, leftByOthers: leftByOthers)
        let found = try await vectors(for: turns, reused: number == 0 ? reused : [], reusedTexts: reusedTexts)
        // Back-pressure: at most one batch is being committed while the next is embedded.
        if let done = try await group.next() { tally.add(done) }
        group.addTask { [self] in
          (try await storeVectors(turns, found, leftByOthers: leftByOthers), batch.count)
        }
        if !overlapsStoring, let done = try await group.next() { tally.add(done) }
      }
      while let done = try await group.next() { tally.add(done) }
      return tally.completed
    }
  }

  /// What the committed batches add up to, reported as progress.
  private struct Tally {
    let total: Int
    let progress: (@Sendable (EngramProgress) -> Void)?
    var completed = 0
    var embedded = 0

    mutating func add(_ batch: (completed: Int, count: Int)) {
      completed += batch.completed
      embedded += batch.count
      progress?(EngramProgress(phase: "embedding", done: embedded, total: total))
    }
  }

  /// Reads back the turns `ids` with the turn before each in its session (what its embedded
  /// text carries), leaving out those forgotten meanwhile and, of `leftByOthers`, those
  /// another ingest has embedded since.
  private func readBack(_ ids: [Int64], leftByOthers: Set<Int64>) async throws -> StoredTurns {
    let read = try await BlockingWork.run { [store] in
      try store.readTransaction { connection in
        try ids.map { id -> (message: Message, previous: String?)? in
          guard let message = try connection.fetch(Message.self, id: id) else { return nil }
          if leftByOthers.contains(id), try connection.embedding(ownerKind: .message, ownerID: id) != nil {
            return nil
          }
          let previous = try message.sessionID.flatMap {
            try connection.previousTurnContent(sessionID: $0, time: message.createdAt, id: id)
          }
          return (message, previous)
        }
      }
    }
    let texts = read.map { entry in
      entry.map {
        DocumentText.make(
          speaker: $0.message.speaker, content: $0.message.content, date: $0.message.createdAt,
          previous: $0.previous)
      } ?? ""
    }
    return StoredTurns(ids: ids, rows: read.map { $0?.message }, texts: texts)
  }

  /// The vector of each turn still present: reused where `reusedTexts` gives its very text,
  /// else computed (in the embedder's batches).
  private func vectors(for turns: StoredTurns, reused: [[Float]], reusedTexts: [String]) async throws
    -> [[Float]?]
  {
    var found: [[Float]?] = Array(repeating: nil, count: turns.ids.count)
    for (offset, vector) in reused.prefix(turns.ids.count).enumerated()
    where turns.texts[offset] == reusedTexts[offset] {
      found[offset] = vector
    }
    let remaining = turns.texts.indices.filter { turns.rows[$0] != nil && found[$0] == nil }
    // The whole batch in one embedder call: its lanes wait for each other once, at its end.
    let texts = remaining.map { turns.texts[$0] }
    let computed = texts.isEmpty ? [] : try await embedding.embed(texts, batchSize: Self.embeddingBatch)
    for (offset, index) in remaining.enumerated() { found[index] = computed[offset] }
    return found
  }

  /// Commits the vectors of the turns still stored (one transaction), then adds them to the
  /// vector index; returns how many of `leftByOthers` it stored.
  private func storeVectors(_ turns: StoredTurns, _ found: [[Float]?], leftByOthers: Set<Int64>)
    async throws -> Int
  {
    let model = embedding.embedder.modelID
    let entries = turns.ids.indices.compactMap { index -> (Message, [Float])? in
      guard let message = turns.rows[index], let vector = found[index] else { return nil }
      return (message, vector)
    }
    return try await BlockingWork.run { [vectors] in
      let kept = try vectors.writeTracked { connection -> [Int] in
        let present = try entries.indices.filter { position in
          let id = entries[position].0.id!
          guard try connection.fetch(Message.self, id: id) != nil else { return false }
          // Embedded by another ingest since it was read: kept as it is.
          return try !leftByOthers.contains(id)
            || connection.embedding(ownerKind: .message, ownerID: id) == nil
        }
        try connection.upsertEmbeddings(
          present.map { position in
            EmbeddingRow(
              ownerKind: .message, ownerID: entries[position].0.id!, model: model,
              vector: entries[position].1, createdAt: entries[position].0.createdAt)
          })
        return present
      }
      try vectors.add(
        kept.map { position in
          let (message, vector) = entries[position]
          return (
            .message, message.id!,
            VectorMetadata(
              kind: ItemKind.message.code, session: message.sessionID ?? 0, scope: 0,
              timestamp: Timestamp.milliseconds(message.createdAt)),
            vector
          )
        })
      return kept.filter { leftByOthers.contains(entries[$0].0.id!) }.count
    }
  }
}
