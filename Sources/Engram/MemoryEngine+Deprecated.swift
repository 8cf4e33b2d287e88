import EngramCore
import Foundation

// The engine's top-level names from before its surface was grouped by topic (0.1.0). Each
// forwards to its new name and is deprecated in 0.2.0; 0.3.0 removes them
// (docs/architecture.md, "The engine's surface").
extension MemoryEngine {
  // MARK: - conversation

  /// Deprecated: `conversation.startSession(name:title:at:)`.
  @available(*, deprecated, renamed: "conversation.startSession(name:title:at:)")
  public func startSession(name: String? = nil, title: String? = nil, at date: Date = Date()) throws -> Int64
  {
    try conversation.startSession(name: name, title: title, at: date)
  }

  /// Deprecated: `conversation.endSession(_:at:)`.
  @available(*, deprecated, renamed: "conversation.endSession(_:at:)")
  public func endSession(_ id: Int64, at date: Date = Date()) throws {
    try conversation.endSession(id, at: date)
  }

  /// Deprecated: `conversation.appendTurn(role:content:speaker:session:at:metadata:embedNow:)`.
  @available(
    *, deprecated, renamed: "conversation.appendTurn(role:content:speaker:session:at:metadata:embedNow:)"
  )
  @discardableResult
  public func appendTurn(
    role: String, content: String, speaker: String? = nil, session: Int64? = nil, at date: Date = Date(),
    metadata: [String: JSONValue] = [:], embedNow: Bool = true
  ) async throws -> Int64 {
    try await conversation.appendTurn(
      role: role, content: content, speaker: speaker, session: session, at: date, metadata: metadata,
      embedNow: embedNow)
  }

  /// Deprecated: `conversation.embedPendingTurns(limit:)`.
  @available(*, deprecated, renamed: "conversation.embedPendingTurns(limit:)")
  @discardableResult
  public func embedPendingTurns(limit: Int = 1024) async throws -> Int {
    try await conversation.embedPendingTurns(limit: limit)
  }

  /// Deprecated: `conversation.recentTurns(limit:session:)`.
  @available(*, deprecated, renamed: "conversation.recentTurns(limit:session:)")
  public func recentTurns(limit: Int, session: Int64? = nil) throws -> [SearchHit] {
    try conversation.recentTurns(limit: limit, session: session)
  }

  /// Deprecated: `conversation.ingest(path:options:progress:)`.
  @available(*, deprecated, renamed: "conversation.ingest(path:options:progress:)")
  @discardableResult
  public func ingest(
    path: String, options: IngestOptions = IngestOptions(),
    progress: (@Sendable (EngramProgress) -> Void)? = nil
  ) async throws -> IngestReport {
    try await conversation.ingest(path: path, options: options, progress: progress)
  }

  /// Deprecated: `conversation.ingest(_:path:sessionPrefix:progress:)`.
  @available(*, deprecated, renamed: "conversation.ingest(_:path:sessionPrefix:progress:)")
  public func ingest(
    _ file: ConversationFile, path: String, sessionPrefix: String = "",
    progress: (@Sendable (EngramProgress) -> Void)? = nil
  ) async throws -> IngestReport {
    try await conversation.ingest(file, path: path, sessionPrefix: sessionPrefix, progress: progress)
  }

  // MARK: - memories

  /// Deprecated: `memories.remember(_:kind:importance:scopeUser:scopeAgent:tags:validFrom:validUntil:session:sourceMessageIDs:at:)`.
  @available(
    *, deprecated,
    renamed:
      "memories.remember(_:kind:importance:scopeUser:scopeAgent:tags:validFrom:validUntil:session:sourceMessageIDs:at:)"
  )
  @discardableResult
  public func remember(
    _ content: String, kind: MemoryKind = .fact, importance: Double = 0.5, scopeUser: String? = nil,
    scopeAgent: String? = nil, tags: [String] = [], validFrom: Date? = nil, validUntil: Date? = nil,
    session: Int64? = nil, sourceMessageIDs: [Int64] = [], at date: Date = Date()
  ) async throws -> Int64 {
    try await memories.remember(
      content, kind: kind, importance: importance, scopeUser: scopeUser, scopeAgent: scopeAgent, tags: tags,
      validFrom: validFrom, validUntil: validUntil, session: session, sourceMessageIDs: sourceMessageIDs,
      at: date)
  }

  /// Deprecated: `memories.rememberReporting(_:kind:importance:scopeUser:scopeAgent:tags:validFrom:validUntil:session:sourceMessageIDs:at:)`.
  @available(
    *, deprecated,
    renamed:
      "memories.rememberReporting(_:kind:importance:scopeUser:scopeAgent:tags:validFrom:validUntil:session:sourceMessageIDs:at:)"
  )
  public func rememberReporting(
    _ content: String, kind: MemoryKind = .fact, importance: Double = 0.5, scopeUser: String? = nil,
    scopeAgent: String? = nil, tags: [String] = [], validFrom: Date? = nil, validUntil: Date? = nil,
    session: Int64? = nil, sourceMessageIDs: [Int64] = [], at date: Date = Date()
  ) async throws -> (id: Int64, isNew: Bool) {
    try await memories.rememberReporting(
      content, kind: kind, importance: importance, scopeUser: scopeUser, scopeAgent: scopeAgent, tags: tags,
      validFrom: validFrom, validUntil: validUntil, session: session, sourceMessageIDs: sourceMessageIDs,
      at: date)
  }

  /// Deprecated: `memories.update(_:content:kind:importance:at:)`.
  @available(*, deprecated, renamed: "memories.update(_:content:kind:importance:at:)")
  @discardableResult
  public func updateMemory(
    _ id: Int64, content: String, kind: MemoryKind? = nil, importance: Double? = nil, at date: Date = Date()
  ) async throws -> Int64 {
    try await memories.update(id, content: content, kind: kind, importance: importance, at: date)
  }

  /// Deprecated: `memories.get(_:)`.
  @available(*, deprecated, renamed: "memories.get(_:)")
  public func memory(_ id: Int64) throws -> MemoryItem? {
    try memories.get(id)
  }

  /// Deprecated: `memories.list(kind:limit:includeSuperseded:)`.
  @available(*, deprecated, renamed: "memories.list(kind:limit:includeSuperseded:)")
  public func memories(kind: MemoryKind? = nil, limit: Int = 100, includeSuperseded: Bool = false) throws
    -> [MemoryItem]
  {
    try memories.list(kind: kind, limit: limit, includeSuperseded: includeSuperseded)
  }

  /// Deprecated: `memories.forget(kind:id:)`.
  @available(*, deprecated, renamed: "memories.forget(kind:id:)")
  @discardableResult
  public func forget(kind: ItemKind = .memory, id: Int64) throws -> Bool {
    try memories.forget(kind: kind, id: id)
  }

  /// Deprecated: `memories.forgetReporting(kind:id:dryRun:)`.
  @available(*, deprecated, renamed: "memories.forgetReporting(kind:id:dryRun:)")
  @discardableResult
  public func forgetReporting(kind: ItemKind, id: Int64, dryRun: Bool = false) throws -> ForgetReport? {
    try memories.forgetReporting(kind: kind, id: id, dryRun: dryRun)
  }

  /// Deprecated: `memories.forget(matching:kinds:limit:dryRun:)`.
  @available(*, deprecated, renamed: "memories.forget(matching:kinds:limit:dryRun:)")
  public func forget(matching query: String, kinds: Set<ItemKind> = [.memory], limit: Int = 10, dryRun: Bool)
    async throws -> [SearchHit]
  {
    try await memories.forget(matching: query, kinds: kinds, limit: limit, dryRun: dryRun)
  }

  // MARK: - userPreferences

  /// Deprecated: `userPreferences.set(_:_:pinned:)`.
  @available(*, deprecated, renamed: "userPreferences.set(_:_:pinned:)")
  public func setPreference(_ key: String, _ value: String, pinned: Bool = false) throws {
    try userPreferences.set(key, value, pinned: pinned)
  }

  /// Deprecated: `userPreferences.get(_:)`.
  @available(*, deprecated, renamed: "userPreferences.get(_:)")
  public func preference(_ key: String) throws -> String? {
    try userPreferences.get(key)
  }

  /// Deprecated: `userPreferences.all()`.
  @available(*, deprecated, renamed: "userPreferences.all()")
  public func preferences() throws -> [(key: String, value: String, pinned: Bool)] {
    try userPreferences.all()
  }

  // MARK: - transfer

  /// Deprecated: `transfer.export(to:)`.
  @available(*, deprecated, renamed: "transfer.export(to:)")
  @discardableResult
  public func export(to path: String) throws -> Int {
    try transfer.export(to: path)
  }

  /// Deprecated: `transfer.export(into:)`.
  @available(*, deprecated, renamed: "transfer.export(into:)")
  @discardableResult
  public func export(into sink: (UnsafeRawBufferPointer) throws -> Void) throws -> Int {
    try transfer.export(into: sink)
  }

  /// Deprecated: `transfer.importExport(from:)`.
  @available(*, deprecated, renamed: "transfer.importExport(from:)")
  @discardableResult
  public func importExport(from path: String) throws -> Int {
    try transfer.importExport(from: path)
  }

  /// Deprecated: `transfer.calendarText(stamp:)`.
  @available(*, deprecated, renamed: "transfer.calendarText(stamp:)")
  public func calendarText(stamp: Date = Date()) throws -> String {
    try transfer.calendarText(stamp: stamp)
  }

  /// Deprecated: `transfer.importCalendar(_:timeZone:at:)`.
  @available(*, deprecated, renamed: "transfer.importCalendar(_:timeZone:at:)")
  @discardableResult
  public func importCalendar(_ data: Data, timeZone: TimeZone = .current, at now: Date = Date()) throws
    -> CalendarImportSummary
  {
    try transfer.importCalendar(data, timeZone: timeZone, at: now)
  }

  // MARK: - maintenance

  /// Deprecated: `maintenance.tableCounts()`.
  @available(*, deprecated, renamed: "maintenance.tableCounts()")
  public func tableCounts() throws -> [String: Int] {
    try maintenance.tableCounts()
  }

  /// Deprecated: `maintenance.databaseBytes()`.
  @available(*, deprecated, renamed: "maintenance.databaseBytes()")
  public func databaseBytes() -> Int {
    maintenance.databaseBytes()
  }

  /// Deprecated: `maintenance.checkpoint()`.
  @available(*, deprecated, renamed: "maintenance.checkpoint()")
  public func checkpoint() throws {
    try maintenance.checkpoint()
  }

  /// Deprecated: `maintenance.metaValue(_:)`.
  @available(*, deprecated, renamed: "maintenance.metaValue(_:)")
  public func metaValue(_ key: String) throws -> String? {
    try maintenance.metaValue(key)
  }

  /// Deprecated: `maintenance.memoryCountsByKind()`.
  @available(*, deprecated, renamed: "maintenance.memoryCountsByKind()")
  public func memoryCountsByKind() throws -> [MemoryKind: Int] {
    try maintenance.memoryCountsByKind()
  }

  /// Deprecated: `maintenance.vectorIndexStatistics`.
  @available(*, deprecated, renamed: "maintenance.vectorIndexStatistics")
  public var vectorIndexStatistics: VectorIndexStatistics {
    maintenance.vectorIndexStatistics
  }

  /// Deprecated: `maintenance.checkEmbedderCurrent()`.
  @available(*, deprecated, renamed: "maintenance.checkEmbedderCurrent()")
  public func checkEmbedderCurrent() throws {
    try maintenance.checkEmbedderCurrent()
  }

  /// Deprecated: `maintenance.setEmbedderSpec(_:)`.
  @available(*, deprecated, renamed: "maintenance.setEmbedderSpec(_:)")
  public func setEmbedderSpec(_ spec: String) throws {
    try maintenance.setEmbedderSpec(spec)
  }
}
