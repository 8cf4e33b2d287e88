import EngramCore
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
  /// Turns stored by this ingest.
  public var turns: Int
  /// Turns of the file an earlier ingest had stored already (skipped).
  public var alreadyStored: Int = 0
  /// Turns an earlier, interrupted ingest stored without their embedding, embedded now.
  public var completed: Int = 0
  /// Memories stored by this ingest (Markdown notes; conversations store turns).
  public var memories: Int = 0
  /// Memories of the notes stored already (identical text), not stored again.
  public var memoriesAlreadyStored: Int = 0
}

/// The stable key of an ingested turn (see migration 10): FNV-1a over the format's message id,
/// or over the session, time, speaker, role, text and how many identical turns came before.
enum TurnKey {
  static func fnv1a(_ parts: [String]) -> Int64 {
    var hash: UInt64 = 0xcbf2_9ce4_8422_2325
    for (index, part) in parts.enumerated() {
      if index > 0 {
        hash ^= 0x1f
        hash = hash &* 0x0000_0100_0000_01b3
      }
      for byte in part.utf8 {
        hash ^= UInt64(byte)
        hash = hash &* 0x0000_0100_0000_01b3
      }
    }
    return Int64(bitPattern: hash)
  }

  /// The keys of `turns` (with their session names), in order.
  static func keys(_ turns: [(session: String, turn: ConversationTurn)]) -> [Int64] {
    var seen: [Int64: Int] = [:]
    return turns.map { session, turn in
      if let id = turn.sourceID, !id.isEmpty { return fnv1a(["id", session, id]) }
      let time = turn.timestamp.map { String(Timestamp.milliseconds($0)) } ?? "-"
      let base = fnv1a([session, time, turn.speaker ?? "", turn.role, turn.content])
      let occurrence = seen[base, default: 0]
      seen[base] = occurrence + 1
      return occurrence == 0 ? base : fnv1a([String(base), String(occurrence)])
    }
  }
}

/// Stores conversation files (turns, by stable key) and Markdown notes (memories).
struct Ingestor: Sendable {
  let open: OpenState
  let store: any MemoryStore
  /// Stores the turns' embeddings and keeps the vector index in step.
  let vectors: VectorIndexKeeper
  let embedding: EmbeddingRunner
  /// Forgotten after an ingest (new speakers).
  let speakers: SpeakerDirectory
  /// Stores the memories Markdown notes give.
  let memories: Memories

  /// How many turns one write transaction stores, and one embedding step embeds.
  static let textBatch = 2_000
  static let embeddingBatch = 256

  /// Reads a conversation file (or Markdown notes: a note file, or a folder of them) and
  /// stores the turns (or memories) not stored before.
  @discardableResult
  func ingest(
    path: String, options: IngestOptions = IngestOptions(),
    progress: (@Sendable (EngramProgress) -> Void)? = nil
  ) async throws -> IngestReport {
    try open.check()
    progress?(EngramProgress(phase: "parsing", done: 0, total: 1))
    switch try Self.read(path: path, options: options) {
    case .notes(let notes):
      return try await store(notes, path: path, progress: progress)
    case .conversations(let file):
      let prefix =
        file.format == .locomo
        ? URL(fileURLWithPath: path).deletingPathExtension().lastPathComponent + "/" : ""
      return try await ingest(file, path: path, sessionPrefix: prefix, progress: progress)
    }
  }

  /// What a path holds once parsed.
  enum Parsed {
    case conversations(ConversationFile)
    case notes([NoteFile])
  }

  /// Reads and parses `path` (a file, or a folder of notes). The file's bytes are released
  /// when this returns, before anything is stored: only the parsed turns stay in memory.
  static func read(path: String, options: IngestOptions) throws(ImportError) -> Parsed {
    if InputFile.isFolder(path) {
      guard options.format == nil || options.format == .markdown else {
        throw .unreadable(path: path, reason: "it is a folder; only Markdown notes are read from a folder")
      }
      let files = NoteFolder.files(in: path)
      guard !files.isEmpty else {
        throw .unreadable(path: path, reason: "it is a folder without Markdown notes (.md)")
      }
      // Every note is read before anything is stored: a malformed one refuses the folder.
      var notes: [NoteFile] = []
      for file in files { notes.append(try NoteFile.read(path: file)) }
      return .notes(notes)
    }
    let data = try InputFile.readAll(path)
    var options = options
    let format: ConversationFile.Format
    if let forced = options.format {
      format = forced
    } else {
      format = try ConversationFile.format(of: data, path: path)
    }
    if format == .markdown {
      let note = try NoteFile.parse(data, path: path)
      guard !note.memories.isEmpty else { throw .empty(path: path) }
      return .notes([note])
    }
    options.format = format
    return .conversations(
      try ConversationFile.parse(
        data, path: path, defaultSession: ConversationFile.defaultSession(path), options: options))
  }

  /// Stores the memories of notes, skipping those stored already (identical text).
  func store(_ notes: [NoteFile], path: String, progress: (@Sendable (EngramProgress) -> Void)?)
    async throws -> IngestReport
  {
    let memories = notes.flatMap(\.memories)
    let fallbackDate = Date()
    var report = IngestReport(path: path, format: .markdown, sessions: 0, turns: 0)
    // In batches: one identical-text check, one embedding call and one transaction each.
    for start in stride(from: 0, to: memories.count, by: Self.embeddingBatch) {
      if Task.isCancelled { throw EngramError.cancelled }
      let batch = memories[start..<min(start + Self.embeddingBatch, memories.count)]
      let added = try await self.memories.rememberNotes(
        batch.map { ($0.text, $0.tags, $0.date ?? fallbackDate) }, kind: .note)
      report.memories += added.filter { $0 }.count
      report.memoriesAlreadyStored += added.filter { !$0 }.count
      progress?(EngramProgress(phase: "embedding", done: start + batch.count, total: memories.count))
    }
    progress?(EngramProgress(phase: "done", done: memories.count, total: memories.count))
    return report
  }

  /// Stores a parsed conversation file, idempotently and resumably: every turn has a stable
  /// key (`TurnKey`); turns already stored are skipped; the text of the new ones is committed
  /// in batches (searchable by keyword at once), then they are embedded in batches, each
  /// committed and indexed as it is computed. A stopped ingest keeps what it committed, and
  /// the next one of the same file stores the rest and embeds what was left unembedded.
  func ingest(
    _ file: ConversationFile, path: String, sessionPrefix: String = "",
    progress: (@Sendable (EngramProgress) -> Void)? = nil
  ) async throws -> IngestReport {
    try open.check()
    let fallbackDate = Date()
    var flat: [(sessionIndex: Int, turn: ConversationTurn)] = []
    for (sessionIndex, session) in file.sessions.enumerated() {
      for turn in session.turns { flat.append((sessionIndex, turn)) }
    }
    let keys = TurnKey.keys(flat.map { (sessionPrefix + file.sessions[$0.sessionIndex].name, $0.turn) })
    let total = flat.count

    // 1. Which turns are stored already (and which of those still lack their embedding).
    progress?(EngramProgress(phase: "checking", done: 0, total: total))
    var stored: [Int64: IngestedTurn] = [:]
    for start in stride(from: 0, to: keys.count, by: Self.textBatch) {
      let slice = Array(keys[start..<min(start + Self.textBatch, keys.count)])
      let found = try await BlockingWork.run { [store] in
        try store.readTransaction { try $0.ingestedTurns(sourceKeys: slice) }
      }
      stored.merge(found) { first, _ in first }
      progress?(EngramProgress(phase: "checking", done: min(start + Self.textBatch, total), total: total))
    }

    // 2. The new turns' text, committed in batches.
    let sessions = file.sessions
    var sessionIDs: [Int64?] = Array(repeating: nil, count: sessions.count)
    var toEmbed: [(id: Int64, text: String, sessionID: Int64, createdAt: Date)] = []
    var written = 0
    var newPositions = flat.indices.filter { stored[keys[$0]] == nil }
    // A key twice in one file (the same id in two places) is stored once.
    var firstSeen: Set<Int64> = []
    newPositions = newPositions.filter { firstSeen.insert(keys[$0]).inserted }
    // The first embeddings are computed before any text is stored: an embedder that cannot
    // embed (a broken model, NaN vectors) fails the ingest with nothing written.
    let firstTexts = newPositions.prefix(Self.embeddingBatch).map { position -> String in
      let (sessionIndex, turn) = flat[position]
      let date = turn.timestamp ?? sessions[sessionIndex].startedAt ?? fallbackDate
      return DocumentText.make(speaker: turn.speaker, content: turn.content, date: date)
    }
    let firstVectors = firstTexts.isEmpty ? [] : try await embedding.embed(firstTexts)
    for start in stride(from: 0, to: newPositions.count, by: Self.textBatch) {
      if Task.isCancelled { throw EngramError.cancelled }
      let positions = Array(newPositions[start..<min(start + Self.textBatch, newPositions.count)])
      let knownSessions = sessionIDs
      let batch = positions.map { position -> (Int, Message) in
        let (sessionIndex, turn) = flat[position]
        let session = sessions[sessionIndex]
        let date = turn.timestamp ?? session.startedAt ?? fallbackDate
        return (
          sessionIndex,
          Message(
            role: MessageRole(rawValue: turn.role) ?? .user, speaker: turn.speaker, content: turn.content,
            createdAt: date, tokenCount: TokenEstimator.estimate(turn.content),
            metadata: JSONValue.object(turn.metadata).jsonText, sourceKey: keys[position])
        )
      }
      let (ids, resolvedSessions) = try await vectors.writeTrackedOffPool {
        connection -> ([Int64], [Int64?]) in
        var resolved = knownSessions
        for (sessionIndex, _) in batch where resolved[sessionIndex] == nil {
          let session = sessions[sessionIndex]
          let name = sessionPrefix + session.name
          if let existing = try connection.session(externalID: name), let id = existing.id {
            resolved[sessionIndex] = id
          } else {
            let started = session.startedAt ?? session.turns.first?.timestamp ?? fallbackDate
            resolved[sessionIndex] = try connection.insert(
              Session(externalID: name, title: session.title, startedAt: started))
          }
        }
        let messages = batch.map { sessionIndex, message -> Message in
          var message = message
          message.sessionID = resolved[sessionIndex]
          return message
        }
        // One INSERT ... SELECT per batch: FTS5 flushes once per batch, not once per turn.
        return (try connection.insert(contentsOf: messages), resolved)
      }
      sessionIDs = resolvedSessions
      for (offset, (sessionIndex, message)) in batch.enumerated() {
        toEmbed.append(
          (
            ids[offset],
            DocumentText.make(speaker: message.speaker, content: message.content, date: message.createdAt),
            resolvedSessions[sessionIndex] ?? 0, message.createdAt
          ))
      }
      written += batch.count
      progress?(EngramProgress(phase: "storing", done: written, total: newPositions.count))
    }
    speakers.invalidate()

    // 3. Turns an interrupted ingest stored without their embedding are embedded too.
    let unembedded = stored.values.filter { !$0.embedded }.map(\.id)
    if !unembedded.isEmpty {
      let rows = try await BlockingWork.run { [store] in
        try store.readTransaction { connection in
          try unembedded.compactMap { try connection.fetch(Message.self, id: $0) }
        }
      }
      for message in rows {
        guard let id = message.id else { continue }
        toEmbed.append(
          (
            id,
            DocumentText.make(speaker: message.speaker, content: message.content, date: message.createdAt),
            message.sessionID ?? 0, message.createdAt
          ))
      }
    }

    // 4. Embeddings, committed and indexed batch by batch.
    let model = embedding.embedder.modelID
    var embedded = 0
    for start in stride(from: 0, to: toEmbed.count, by: Self.embeddingBatch) {
      if Task.isCancelled { throw EngramError.cancelled }
      let batch = Array(toEmbed[start..<min(start + Self.embeddingBatch, toEmbed.count)])
      // The new turns come first in `toEmbed`: the first of them were embedded before storing.
      let reused = start == 0 ? firstVectors : []
      let vectors =
        batch.count > reused.count
        ? reused + (try await embedding.embed(batch.dropFirst(reused.count).map(\.text))) : reused
      let kept = try await self.vectors.writeTrackedOffPool { connection -> [Int] in
        // A turn forgotten meanwhile stays forgotten.
        let present = try batch.indices.filter { try connection.fetch(Message.self, id: batch[$0].id) != nil }
        try connection.upsertEmbeddings(
          present.map { position in
            EmbeddingRow(
              ownerKind: .message, ownerID: batch[position].id, model: model, vector: vectors[position],
              createdAt: batch[position].createdAt)
          })
        return present
      }
      try self.vectors.add(
        kept.map { position in
          let item = batch[position]
          return (
            .message, item.id,
            VectorMetadata(
              kind: ItemKind.message.code, session: item.sessionID, scope: 0,
              timestamp: Timestamp.milliseconds(item.createdAt)),
            vectors[position]
          )
        })
      embedded += batch.count
      progress?(EngramProgress(phase: "embedding", done: embedded, total: toEmbed.count))
    }
    progress?(EngramProgress(phase: "done", done: total, total: total))
    return IngestReport(
      path: path, format: file.format, sessions: file.sessions.count, turns: written,
      alreadyStored: total - written, completed: unembedded.count)
  }
}
