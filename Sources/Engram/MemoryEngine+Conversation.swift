import EngramCore
import Foundation

extension MemoryEngine {
  /// The conversation log: sessions, turns and conversation files (see ``Conversation``).
  public var conversation: Conversation { Conversation(log: conversationLog, ingestor: ingestor) }

  /// The conversation log of a memory (`engine.conversation`): sessions, turns appended one
  /// at a time or read from conversation exports, and the latest turns read back.
  ///
  /// A view of the engine's parts that forwards each call (it holds no state of its own).
  public struct Conversation: Sendable {
    let log: ConversationLog
    let ingestor: Ingestor

    /// Starts a session; returns its id. An existing session with the same name is reused.
    public func startSession(name: String? = nil, title: String? = nil, at date: Date = Date()) throws
      -> Int64
    {
      try log.startSession(name: name, title: title, at: date)
    }

    /// Marks a session ended.
    public func endSession(_ id: Int64, at date: Date = Date()) throws {
      try log.endSession(id, at: date)
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
      try await log.appendTurn(
        role: role, content: content, speaker: speaker, session: session, at: date, metadata: metadata,
        embedNow: embedNow)
    }

    /// Embeds the turns this engine stored with `embedNow: false` (up to `limit` of them);
    /// returns how many. Only those turns are read, so the cost does not grow with the memory;
    /// turns left unembedded by a process that stopped first are found by `doctor(repair:)`.
    @discardableResult
    public func embedPendingTurns(limit: Int = 1024) async throws -> Int {
      try await log.embedPendingTurns(limit: limit)
    }

    /// The most recent turns, oldest first.
    public func recentTurns(limit: Int, session: Int64? = nil) throws -> [SearchHit] {
      try log.recentTurns(limit: limit, session: session)
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
