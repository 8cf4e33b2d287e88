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
  /// What was left out of the file or folder, each with its reason (the rest was stored).
  public var warnings: [IngestWarning] = []
}

/// The stable key of an ingested turn (see migration 10): FNV-1a over the format's message id,
/// or over the session, time, speaker, role, text and how many identical turns came before.
enum TurnKey {
  /// FNV-1a over `parts` with a unit separator (0x1F) between them. The keys are stored: the
  /// arithmetic never changes (`TurnKeyTests` pins a value).
  static func fnv1a(_ parts: [String]) -> Int64 {
    var hash = FNV1a()
    for (index, part) in parts.enumerated() {
      if index > 0 { hash.add(0x1f) }
      hash.add(part.utf8)
    }
    return Int64(bitPattern: hash.value)
  }

  /// The keys of `turns` (with their session names), in order.
  static func keys(_ turns: [(session: String, turn: ConversationTurn)]) -> [Int64] {
    var keys = TurnKeys()
    return turns.map { keys.next(session: $0.session, turn: $0.turn) }
  }
}

/// The keys of a file's turns, one at a time in file order (a text repeated with the same
/// session, time and speaker is told apart by its occurrence).
struct TurnKeys {
  private var seen: [Int64: Int] = [:]

  mutating func next(session: String, turn: ConversationTurn) -> Int64 {
    if let id = turn.sourceID, !id.isEmpty { return TurnKey.fnv1a(["id", session, id]) }
    let time = turn.timestamp.map { String(Timestamp.milliseconds($0)) } ?? "-"
    let base = TurnKey.fnv1a([session, time, turn.speaker ?? "", turn.role, turn.content])
    let occurrence = seen[base, default: 0]
    seen[base] = occurrence + 1
    return occurrence == 0 ? base : TurnKey.fnv1a([String(base), String(occurrence)])
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
  let memories: MemoryEngine.Memories
  /// Whether a batch's vectors are committed while the next batch is embedded (see
  /// `embedStored`); false commits each before the next is read, as earlier versions did.
  var overlapsStoring = true

  /// How many turns one write transaction stores, and one embedding step embeds.
  static let textBatch = 2_000
  static let embeddingBatch = 256

  /// Reads a conversation file (or Markdown notes: a note file, or a folder of them) and
  /// stores the turns (or memories) not stored before. A regular file is read one
  /// conversation at a time (`ConversationStream`), twice: once to check all of it (nothing is
  /// stored from a malformed file) and count its turns, once to store them.
  @discardableResult
  func ingest(
    path: String, options: IngestOptions = IngestOptions(),
    progress: (@Sendable (EngramProgress) -> Void)? = nil
  ) async throws -> IngestReport {
    try open.check()
    progress?(EngramProgress(phase: "parsing", done: 0, total: 1))
    let format = try await BlockingWork.run { () throws(ImportError) -> ConversationFile.Format? in
      guard options.format == nil, InputFile.isRegularFile(path) else { return options.format }
      return try ConversationStream.detect(path: path)
    }
    if InputFile.isFolder(path) || format == .markdown || !InputFile.isRegularFile(path) {
      switch try await BlockingWork.run({ () throws(ImportError) in
        try Self.read(path: path, options: options)
      }) {
      case .notes(let notes, let warnings):
        var report = try await store(notes, path: path, progress: progress)
        report.warnings = warnings
        return report
      case .conversations(let file):
        return try await ingest(
          file, path: path, sessionPrefix: Self.sessionPrefix(file.format, path), progress: progress)
      }
    }
    var streamOptions = options
    streamOptions.format = format
    let opened = streamOptions
    let source = try await BlockingWork.run { () throws(ImportError) in
      try ConversationStream(path: path, options: opened)
    }
    return try await ingest(
      first: source, path: path, sessionPrefix: Self.sessionPrefix(source.format, path), progress: progress
    )
  }

  /// LoCoMo's sessions are named after their file (its sessions are `session_1`, ...).
  static func sessionPrefix(_ format: ConversationFile.Format, _ path: String) -> String {
    format == .locomo ? URL(fileURLWithPath: path).deletingPathExtension().lastPathComponent + "/" : ""
  }

  /// What a path holds once parsed.
  enum Parsed {
    case conversations(ConversationFile)
    /// The notes, and the links of their folder left out.
    case notes([NoteFile], warnings: [IngestWarning])
  }

  /// Reads and parses `path` whole (a folder of notes, a note, standard input or a pipe).
  static func read(path: String, options: IngestOptions) throws(ImportError) -> Parsed {
    if InputFile.isFolder(path) {
      guard options.format == nil || options.format == .markdown else {
        throw .unreadable(path: path, reason: "it is a folder; only Markdown notes are read from a folder")
      }
      let walked = IngestFolder.walk(path)
      let files = walked.notes
      guard !files.isEmpty else {
        throw .unreadable(path: path, reason: "it is a folder without Markdown notes (.md)")
      }
      // Every note is read before anything is stored: a malformed one refuses the folder.
      var notes: [NoteFile] = []
      for file in files { notes.append(try NoteFile.read(path: file)) }
      return .notes(notes, warnings: walked.noteWarnings)
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
      return .notes([note], warnings: [])
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
    // A section longer than `TurnText.maxBytes` is stored as its parts, in order.
    let memories = notes.flatMap(\.memories).flatMap { memory in
      TurnText.parts(memory.text).map { text in
        var part = memory
        part.text = text
        return part
      }
    }
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

  /// Stores a parsed conversation file (see `ingest(first:path:sessionPrefix:progress:)`).
  func ingest(
    _ file: ConversationFile, path: String, sessionPrefix: String = "",
    progress: (@Sendable (EngramProgress) -> Void)? = nil
  ) async throws -> IngestReport {
    try await ingest(
      first: ConversationStream(file, path: path), path: path, sessionPrefix: sessionPrefix,
      progress: progress)
  }

  /// What the checking pass learns of a file's sessions, by name.
  struct SessionFacts {
    /// The sessions' names.
    var names: Set<String> = []
    var starts: [String: Date] = [:]
    var firstTimes: [String: Date] = [:]
    var titles: [String: String] = [:]
    var turns = 0
    var warnings: [IngestWarning] = []

    mutating func add(_ session: ConversationSession) {
      warnings += session.warnings
      // A record whose turns all dangled holds no session.
      guard !session.turns.isEmpty || session.warnings.isEmpty else { return }
      if names.insert(session.name).inserted {
        if let title = session.title { titles[session.name] = title }
        if let first = session.turns.first?.timestamp { firstTimes[session.name] = first }
      }
      if let start = session.startedAt { starts[session.name] = min(starts[session.name] ?? start, start) }
      turns += session.turns.count
    }
  }

  /// Stores a conversation file read as a stream of sessions, idempotently and resumably:
  /// every turn has a stable key (`TurnKey`); turns already stored are skipped; the text of
  /// the new ones is committed in batches (searchable by keyword at once), then they are
  /// embedded in batches, each committed and indexed as it is computed. A stopped ingest
  /// keeps what it committed, and the next one of the same file stores the rest and embeds
  /// what was left unembedded.
  ///
  /// The file is read twice (`first`, then `first.again()`): first whole, to check it (a malformed
  /// file stores nothing), count its turns and learn each session's start; then to store.
  /// Memory holds one conversation and one batch of turns, plus the row ids to embed.
  func ingest(
    first: ConversationStream,
    path: String, sessionPrefix: String, progress: (@Sendable (EngramProgress) -> Void)?
  ) async throws -> IngestReport {
    try open.check()
    let fallbackDate = Date()
    let format = first.format

    // 1. Check the whole file and learn its sessions.
    let facts = try await BlockingWork.run { () throws(ImportError) -> SessionFacts in
      var facts = SessionFacts()
      // A turn longer than `TurnText.maxBytes` is stored (and counted) as its parts.
      while let session = try first.next() { facts.add(session.storedParts()) }
      return facts
    }
    guard facts.turns > 0 || !facts.names.isEmpty || !first.isFromFile else {
      // A file without a turn (an empty JSONL file, an export of empty conversations).
      throw ImportError.empty(path: path)
    }
    let total = facts.turns

    // 2. Read it again: each batch's new turns stored, keys of stored ones skipped.
    let stream = try await BlockingWork.run { () throws(ImportError) in try first.again() }
    var sessionIDs: [String: Int64] = [:]
    var keys = TurnKeys()
    var seen: Set<Int64> = []
    var newIDs: [Int64] = []
    var unembedded: [Int64] = []
    var firstVectors: [[Float]]?
    // The texts they were made from (reused where the stored turn gives the same text).
    var firstTexts: [String] = []
    var pending: [(session: String, turn: ConversationTurn)] = []
    var checked = 0
    var written = 0
    var exhausted = false
    progress?(EngramProgress(phase: "storing", done: 0, total: total))
    while !exhausted {
      if Task.isCancelled { throw EngramError.cancelled }
      while pending.count < Self.textBatch {
        guard let session = try await BlockingWork.run({ () throws(ImportError) in try stream.next() }) else {
          exhausted = true
          break
        }
        pending += session.storedParts().turns.map { (sessionPrefix + session.name, $0) }
      }
      let batch = pending.prefix(Self.textBatch)
      pending.removeFirst(batch.count)
      guard !batch.isEmpty else { break }
      checked += batch.count
      // Keys seen earlier in this file are the same turn again: stored once.
      let batchKeys = batch.map { keys.next(session: $0.session, turn: $0.turn) }
      let fresh = batchKeys.indices.filter { seen.insert(batchKeys[$0]).inserted }
      let lookup = fresh.map { batchKeys[$0] }
      let stored = try await BlockingWork.run { [store] in
        try store.readTransaction { try $0.ingestedTurns(sourceKeys: lookup) }
      }
      unembedded += stored.values.filter { !$0.embedded }.map(\.id)
      let positions = fresh.filter { stored[batchKeys[$0]] == nil }
      let turns = positions.map { position -> (session: String, message: Message) in
        let (session, turn) = batch[batch.startIndex + position]
        let name = String(session.dropFirst(sessionPrefix.count))
        let date = turn.timestamp ?? facts.starts[name] ?? fallbackDate
        return (
          session,
          Message(
            role: MessageRole(rawValue: turn.role) ?? .user, speaker: turn.speaker, content: turn.content,
            createdAt: date, tokenCount: TokenEstimator.estimate(turn.content),
            metadata: JSONValue.object(turn.metadata).jsonText, sourceKey: batchKeys[position])
        )
      }
      if firstVectors == nil, !turns.isEmpty {
        // The first embeddings are computed before any text is stored: an embedder that
        // cannot embed (a broken model, NaN vectors) fails the ingest with nothing written.
        // A turn's previous one is the turn before it in the batch, in the same session.
        let first = Array(turns.prefix(Self.embeddingBatch))
        firstTexts = first.indices.map { index in
          let (session, message) = first[index]
          let previous = index > 0 && first[index - 1].session == session ? first[index - 1].message : nil
          return DocumentText.make(
            speaker: message.speaker, content: message.content, date: message.createdAt,
            previous: previous.flatMap { $0.createdAt <= message.createdAt ? $0.content : nil })
        }
        firstVectors = try await embedding.embed(firstTexts, batchSize: Self.embeddingBatch)
      }
      if !turns.isEmpty {
        let known = sessionIDs
        let (ids, resolved) = try await vectors.writeTrackedOffPool {
          connection -> ([Int64], [String: Int64]) in
          var resolved = known
          for (session, _) in turns where resolved[session] == nil {
            let name = String(session.dropFirst(sessionPrefix.count))
            if let existing = try connection.session(externalID: session), let id = existing.id {
              resolved[session] = id
            } else {
              let started = facts.starts[name] ?? facts.firstTimes[name] ?? fallbackDate
              resolved[session] = try connection.insert(
                Session(externalID: session, title: facts.titles[name], startedAt: started))
            }
          }
          let messages = turns.map { session, message -> Message in
            var message = message
            message.sessionID = resolved[session]
            return message
          }
          // One INSERT ... SELECT per batch: FTS5 flushes once per batch, not once per turn.
          return (try connection.insert(contentsOf: messages), resolved)
        }
        sessionIDs = resolved
        newIDs += ids
        written += ids.count
      }
      progress?(EngramProgress(phase: "storing", done: checked, total: total))
    }
    speakers.invalidate()

    // 3. Embeddings of the new turns, then of turns an interrupted ingest stored without
    // theirs, committed and indexed batch by batch (rows read back by id), each batch's
    // commit overlapping the next batch's embedding (`embedStored`).
    // Turns another ingest stored without their embedding may be embedded by it meanwhile
    // (two ingests of one file at once): those are left to it, and only the turns this
    // ingest embeds are counted (`completed`).
    let completed = try await embedStored(
      newIDs + unembedded, leftByOthers: Set(unembedded), reused: newIDs.isEmpty ? [] : firstVectors ?? [],
      reusedTexts: firstTexts, progress: progress)
    progress?(EngramProgress(phase: "done", done: total, total: total))
    return IngestReport(
      path: path, format: format, sessions: facts.names.count, turns: written,
      alreadyStored: total - written, completed: completed, warnings: facts.warnings)
  }
}
