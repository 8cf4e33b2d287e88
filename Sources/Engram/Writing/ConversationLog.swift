import EngramCore
import EngramStore
import EngramVectors
import Foundation
import Synchronization

/// The conversation log: sessions and turns, each turn stored with its embedding in one
/// transaction (or embedded later, off the caller's path), and the latest turns read back.
final class ConversationLog: Sendable {
  let open: OpenState
  let store: any MemoryStore
  /// Stores embeddings and keeps the vector index in step.
  let vectors: VectorIndexKeeper
  let embedding: EmbeddingRunner
  /// Forgotten when a turn names a speaker.
  let speakers: SpeakerDirectory
  /// Turns stored with `embedNow: false` and not embedded yet, oldest first.
  let deferredTurns = Mutex<[Int64]>([])

  init(
    open: OpenState, store: any MemoryStore, vectors: VectorIndexKeeper, embedding: EmbeddingRunner,
    speakers: SpeakerDirectory
  ) {
    self.open = open
    self.store = store
    self.vectors = vectors
    self.embedding = embedding
    self.speakers = speakers
  }

  /// Starts a session; returns its id. An existing session with the same name is reused.
  func startSession(name: String? = nil, title: String? = nil, at date: Date = Date()) throws -> Int64 {
    try open.check()
    return try store.writeTransaction { connection in
      if let name, let existing = try connection.session(externalID: name), let id = existing.id {
        return id
      }
      return try connection.insert(
        Session(externalID: name, title: title, startedAt: date))
    }
  }

  /// Marks a session ended.
  func endSession(_ id: Int64, at date: Date = Date()) throws {
    try open.check()
    try store.writeTransaction { connection in
      guard var session = try connection.fetch(Session.self, id: id) else {
        throw StoreError.notFound(table: "sessions", id: id)
      }
      session.endedAt = date
      try connection.update(session)
    }
  }

  /// Appends one conversation turn (stored and embedded in one transaction); returns its id.
  /// A text longer than `TurnText.maxBytes` is stored as its parts (the id of the first is
  /// returned).
  @discardableResult
  func appendTurn(
    role: String, content: String, speaker: String? = nil, session: Int64? = nil, at date: Date = Date(),
    metadata: [String: JSONValue] = [:], embedNow: Bool = true
  ) async throws -> Int64 {
    try open.check()
    guard let role = MessageRole(rawValue: role) else {
      throw EngramError.invalidConfiguration(
        field: "role", reason: "'\(role)' is not system, user, assistant or tool")
    }
    guard !TextChecks.isBlank(content) else {
      throw EngramError.emptyText
    }
    // A text longer than `TurnText.maxBytes` is stored as its parts, in order.
    let texts = TurnText.parts(content)
    let messages = texts.enumerated().map { offset, text in
      Message(
        sessionID: session, role: role, speaker: speaker, content: text,
        createdAt: date, tokenCount: TokenEstimator.estimate(text),
        metadata: JSONValue.object(TurnText.partMetadata(metadata, number: offset + 1, of: texts.count))
          .jsonText)
    }
    guard embedNow else {
      let ids = try store.writeTransaction { connection in try messages.map { try connection.insert($0) } }
      deferredTurns.withLock { $0.append(contentsOf: ids) }
      if speaker != nil { speakers.invalidate() }
      return ids[0]
    }
    // The turn it follows in its session (its embedded text carries the start of it); a
    // part follows the part before it.
    var previous: String?
    if let session {
      previous = try await BlockingWork.run { [store] in
        try store.readTransaction { try $0.previousTurnContent(sessionID: session, time: date, id: nil) }
      }
    }
    let documents = texts.indices.map { index in
      DocumentText.make(
        speaker: speaker, content: texts[index], date: date,
        previous: index == 0 ? previous : texts[index - 1])
    }
    let vectors = try await embedding.embed(documents)
    let model = embedding.embedder.modelID
    let ids = try await self.vectors.writeTrackedOffPool { connection in
      try zip(messages, vectors).map { message, vector in
        let id = try connection.insert(message)
        try connection.upsertEmbedding(
          EmbeddingRow(
            ownerKind: .message, ownerID: id, model: model, vector: vector,
            createdAt: message.createdAt))
        return id
      }
    }
    if speaker != nil { speakers.invalidate() }
    try self.vectors.add(
      zip(ids, vectors).map { id, vector in
        (
          .message, id,
          VectorMetadata(
            kind: ItemKind.message.code, session: session ?? 0, scope: 0,
            timestamp: Timestamp.milliseconds(date)), vector
        )
      })
    return ids[0]
  }

  /// Embeds the turns this engine stored with `embedNow: false` (up to `limit` of them);
  /// returns how many.
  @discardableResult
  func embedPendingTurns(limit: Int = 1024) async throws -> Int {
    try open.check()
    let ids = deferredTurns.withLock { ids in
      let taken = Array(ids.prefix(max(0, limit)))
      ids.removeFirst(taken.count)
      return taken
    }
    guard !ids.isEmpty else { return 0 }
    do {
      return try await embedTurns(ids)
    } catch {
      // Nothing was stored: keep them for the next call.
      deferredTurns.withLock { $0.insert(contentsOf: ids, at: 0) }
      throw error
    }
  }

  private func embedTurns(_ ids: [Int64]) async throws -> Int {
    let read = try store.readTransaction { connection in
      try ids.compactMap { id -> (Message, String?)? in
        guard let message = try connection.fetch(Message.self, id: id) else { return nil }
        return (
          message,
          try message.sessionID.flatMap {
            try connection.previousTurnContent(sessionID: $0, time: message.createdAt, id: id)
          }
        )
      }
    }
    let pending = read.map(\.0)
    guard !pending.isEmpty else { return 0 }
    let vectors = try await embedding.embed(
      read.map { message, previous in
        DocumentText.make(
          speaker: message.speaker, content: message.content, date: message.createdAt, previous: previous)
      })
    let model = embedding.embedder.modelID
    let stored = try await self.vectors.writeTrackedOffPool { connection -> [Int] in
      var stored: [Int] = []
      for (position, message) in pending.enumerated() {
        // A turn forgotten in the meantime stays forgotten.
        guard let id = message.id, try connection.fetch(Message.self, id: id) != nil else { continue }
        try connection.upsertEmbedding(
          EmbeddingRow(
            ownerKind: .message, ownerID: id, model: model, vector: vectors[position],
            createdAt: message.createdAt))
        stored.append(position)
      }
      return stored
    }
    try self.vectors.add(
      stored.map { position in
        let message = pending[position]
        return (
          .message, message.id ?? 0,
          VectorMetadata(
            kind: ItemKind.message.code, session: message.sessionID ?? 0, scope: 0,
            timestamp: Timestamp.milliseconds(message.createdAt)),
          vectors[position]
        )
      })
    return stored.count
  }

  /// The most recent turns, oldest first.
  func recentTurns(limit: Int, session: Int64? = nil) throws -> [SearchHit] {
    try open.check()
    return try store.readTransaction { try $0.recentMessages(limit: limit, sessionID: session) }.map {
      message in
      SearchHit(
        kind: .message, id: message.id ?? 0, text: message.content, sessionID: message.sessionID,
        speaker: message.speaker ?? message.role.rawValue, timestamp: message.createdAt,
        bm25: nil, cosine: nil, score: 0, provenance: ["recent"],
        metadata: (try? JSONValue.parse(message.metadata))?.objectValue ?? [:])
    }
  }
}
