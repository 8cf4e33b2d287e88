import EngramStore
import EngramVectors
import Foundation
import Synchronization

/// Progress of a long operation (ingest, reindex, compaction).
public struct EngramProgress: Sendable, Equatable {
  /// What is being done: `parsing`, `embedding`, `storing`, `indexing`, ...
  public var phase: String
  /// Units done so far.
  public var done: Int
  /// Units in all.
  public var total: Int

  public init(phase: String, done: Int, total: Int) {
    self.phase = phase
    self.done = done
    self.total = total
  }
}

/// What an ingest stored.
public struct IngestReport: Sendable, Equatable {
  /// The file read (`-` for standard input).
  public var path: String
  /// The format it was read as.
  public var format: ConversationFile.Format
  /// Sessions created or appended to.
  public var sessions: Int
  /// Turns stored.
  public var turns: Int
}

struct Ingestor: EnginePart {
  let resources: EngineResources

  /// Reads a conversation file and stores all of it, or nothing.
  @discardableResult
  func ingest(path: String, progress: (@Sendable (EngramProgress) -> Void)? = nil) async throws
    -> IngestReport
  {
    try checkOpen()
    progress?(EngramProgress(phase: "parsing", done: 0, total: 1))
    let file = try ConversationFile.read(path: path)
    let prefix =
      file.format == .locomo ? URL(fileURLWithPath: path).deletingPathExtension().lastPathComponent + "/" : ""
    return try await ingest(file, path: path, sessionPrefix: prefix, progress: progress)
  }

  /// Stores a parsed conversation file (see `ingest(path:progress:)`).
  func ingest(
    _ file: ConversationFile, path: String, sessionPrefix: String = "",
    progress: (@Sendable (EngramProgress) -> Void)? = nil
  ) async throws -> IngestReport {
    try checkOpen()
    let fallbackDate = Date()
    struct Pending {
      var sessionIndex: Int
      var message: Message
      var vectorText: String
    }
    var pending: [Pending] = []
    for (sessionIndex, session) in file.sessions.enumerated() {
      for turn in session.turns {
        let date = turn.timestamp ?? session.startedAt ?? fallbackDate
        let message = Message(
          role: MessageRole(rawValue: turn.role) ?? .user, speaker: turn.speaker, content: turn.content,
          createdAt: date, tokenCount: TokenEstimator.estimate(turn.content),
          metadata: JSONValue.object(turn.metadata).jsonText)
        pending.append(
          Pending(
            sessionIndex: sessionIndex, message: message,
            vectorText: DocumentText.make(speaker: turn.speaker, content: turn.content, date: date)))
      }
    }
    let total = pending.count
    let vectors = try await embed(pending.map(\.vectorText)) { done in
      progress?(EngramProgress(phase: "embedding", done: done, total: total))
    }
    if Task.isCancelled { throw EngramError.cancelled }
    progress?(EngramProgress(phase: "storing", done: 0, total: total))
    let model = embedder.modelID
    let sessions = file.sessions
    let turns = pending
    let stored = try await writeTrackedOffPool { connection -> [(Int64, Int64, Int64)] in
      var sessionIDs: [Int64] = []
      for session in sessions {
        let name = sessionPrefix + session.name
        if let existing = try connection.session(externalID: name), let id = existing.id {
          sessionIDs.append(id)
        } else {
          let started = session.startedAt ?? session.turns.first?.timestamp ?? fallbackDate
          sessionIDs.append(
            try connection.insert(
              Session(externalID: name, startedAt: started)))
        }
      }
      let messages = turns.map { item -> Message in
        var message = item.message
        message.sessionID = sessionIDs[item.sessionIndex]
        return message
      }
      // One INSERT ... SELECT for all turns: FTS5 flushes once per file, not once per turn.
      let ids = try connection.insert(contentsOf: messages)
      try connection.upsertEmbeddings(
        messages.enumerated().map { position, message in
          EmbeddingRow(
            ownerKind: .message, ownerID: ids[position], model: model, vector: vectors[position],
            createdAt: message.createdAt)
        })
      return messages.enumerated().map { position, message in
        (ids[position], message.sessionID ?? 0, Timestamp.milliseconds(message.createdAt))
      }
    }
    resources.speakers.invalidate()
    progress?(EngramProgress(phase: "indexing", done: 0, total: total))
    try indexVectors(
      stored.enumerated().map { position, row in
        (
          .message, row.0,
          VectorMetadata(kind: ItemKind.message.code, session: row.1, scope: 0, timestamp: row.2),
          vectors[position]
        )
      })
    progress?(EngramProgress(phase: "done", done: total, total: total))
    return IngestReport(path: path, format: file.format, sessions: file.sessions.count, turns: total)
  }
}
