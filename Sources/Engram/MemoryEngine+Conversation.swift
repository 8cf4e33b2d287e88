import EngramCore
import EngramStore
import EngramVectors
import Foundation
import Synchronization

extension MemoryEngine {
  /// The conversation log of a memory (`engine.conversation`): sessions, turns appended one
  /// at a time (each stored with its embedding in one transaction, or embedded later, off the
  /// caller's path) or read from conversation exports, and the latest turns read back.
  ///
  /// Every method is async and runs its SQLite work off the cooperative thread pool.
  public final class Conversation: Sendable {
    let open: OpenState
    let store: any MemoryStore
    /// Stores embeddings and keeps the vector index in step.
    let vectors: VectorIndexKeeper
    let embedding: EmbeddingRunner
    /// Forgotten when a turn names a speaker.
    let speakers: SpeakerDirectory
    /// Reads conversation files and notes.
    let ingestor: Ingestor
    /// Turns stored with `embedNow: false` and not embedded yet, oldest first.
    let deferredTurns = Mutex<[Int64]>([])

    init(
      open: OpenState, store: any MemoryStore, vectors: VectorIndexKeeper, embedding: EmbeddingRunner,
      speakers: SpeakerDirectory, ingestor: Ingestor
    ) {
      self.open = open
      self.store = store
      self.vectors = vectors
      self.embedding = embedding
      self.speakers = speakers
      self.ingestor = ingestor
    }

    /// Starts a session; returns its id. An existing session with the same name is reused.
    public func startSession(name: String? = nil, title: String? = nil, at date: Date = Date()) async throws
      -> Int64
    {
      try await store.writeOffPool(open) { connection in
        if let name, let existing = try connection.session(externalID: name), let id = existing.id {
          return id
        }
        return try connection.insert(Session(externalID: name, title: title, startedAt: date))
      }
    }

    /// Marks a session ended.
    /// - Throws: `StoreError.notFound` when no session has `id`.
    public func endSession(_ id: Int64, at date: Date = Date()) async throws {
      try await store.writeOffPool(open) { connection in
        guard var session = try connection.fetch(Session.self, id: id) else {
          throw StoreError.notFound(table: "sessions", id: id)
        }
        session.endedAt = date
        try connection.update(session)
      }
    }

    /// Appends one conversation turn (stored and embedded in one transaction); returns its id.
    ///
    /// A text longer than `TurnText.maxBytes` (64 KiB) is stored as ordered turns of at most
    /// that size (their metadata says `part` and `parts`), which joined give it back byte
    /// for byte; the id returned is the first part's.
    ///
    /// With `embedNow: false` the turn is stored at once (searchable by keyword) and embedded
    /// later by `embedPendingTurns()`, off the caller's critical path.
    ///
    /// - Throws: `EngramError.emptyText` for blank text; embedder and store errors. Nothing is
    ///   stored when any step fails.
    @discardableResult
    public func appendTurn(
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
        let ids = try await store.writeOffPool(open) { connection in
          try messages.map { try connection.insert($0) }
        }
        deferredTurns.withLock { $0.append(contentsOf: ids) }
        if speaker != nil { speakers.invalidate() }
        return ids[0]
      }
      // The turn it follows in its session (its embedded text carries the start of it); a
      // part follows the part before it.
      var previous: String?
      if let session {
        previous = try await store.readOffPool(open) {
          try $0.previousTurnContent(sessionID: session, time: date, id: nil)
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
    /// returns how many. Only those turns are read, so the cost does not grow with the memory;
    /// turns left unembedded by a process that stopped first are found by `doctor(repair:)`.
    @discardableResult
    public func embedPendingTurns(limit: Int = 1024) async throws -> Int {
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
      let read = try await store.readOffPool(open) { connection in
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
    public func recentTurns(limit: Int, session: Int64? = nil) async throws -> [SearchHit] {
      try await store.readOffPool(open) { try $0.recentMessages(limit: limit, sessionID: session) }.map {
        message in
        SearchHit(
          kind: .message, id: message.id ?? 0, text: message.content, sessionID: message.sessionID,
          speaker: message.speaker ?? message.role.rawValue, timestamp: message.createdAt,
          bm25: nil, cosine: nil, score: 0, provenance: ["recent"],
          metadata: (try? JSONValue.parse(message.metadata))?.objectValue ?? [:])
      }
    }

    /// Reads a conversation export, or Markdown notes, and stores what is not stored yet.
    ///
    /// The format is detected from the content unless `options.format` names it (see
    /// `ConversationFile.Format` and `docs/ingest.md`). Ingest is idempotent and resumable:
    /// every turn has a stable key (the format's message id, else a hash of session, time,
    /// speaker and text) and a stored turn is skipped; turns are committed in batches, so a
    /// stopped ingest keeps a prefix and running it again completes it. A malformed line or
    /// record refuses the file with its line number before anything is stored. Markdown notes
    /// (a `.md` file, or a folder of them, read recursively) become memories of kind `note`,
    /// one per note or per heading section of a long note; an identical memory is not stored
    /// twice.
    ///
    /// - Parameters:
    ///   - path: a file (`-` reads standard input) or a folder of Markdown notes.
    ///   - options: the format to force, and the order of day and month for WhatsApp dates.
    ///   - progress: called with the phase and counts as the work advances.
    /// - Throws: `ImportError` for a file that cannot be read or parsed, `EngramError.cancelled`.
    @discardableResult
    public func ingest(
      path: String, options: IngestOptions = IngestOptions(),
      progress: (@Sendable (EngramProgress) -> Void)? = nil
    ) async throws -> IngestReport {
      try await ingestor.ingest(path: path, options: options, progress: progress)
    }

    /// Stores a parsed conversation file (see ``ingest(path:options:progress:)``).
    public func ingest(
      _ file: ConversationFile, path: String, sessionPrefix: String = "",
      progress: (@Sendable (EngramProgress) -> Void)? = nil
    ) async throws -> IngestReport {
      try await ingestor.ingest(file, path: path, sessionPrefix: sessionPrefix, progress: progress)
    }
  }
}
