import EngramStore
import EngramVectors
import Foundation

/// Where an export goes.
public enum ExportDestination: Sendable {
  /// A file, written to a private temporary file beside it and renamed into place.
  case file(String)
  /// Standard output.
  case standardOutput
}

/// Writes the memory as JSONL (see `MemoryEngine.Transfer.export(to:)`).
struct Exporter: Sendable {
  let open: OpenState
  let store: any MemoryStore

  /// Tables in export order (referenced rows before the rows that reference them) and the
  /// line `type` of each, per `schemas/memory-export.schema.json`. Columns are read from
  /// the database itself, so the export follows the migrations without restating them.
  static let exportTables: [(table: String, type: String, order: String)] = [
    ("meta", "meta", "key"), ("sessions", "session", "id"), ("summaries", "summary", "id"),
    ("messages", "message", "id"), ("memories", "memory", "id"), ("embeddings", "embedding", "id"),
    ("preferences", "preference", "key"), ("skill_state", "skill_state", "skill_id"),
    ("agent_items", "agent_item", "id"), ("traces", "trace", "id"), ("pending_calls", "pending_call", "id"),
  ]

  /// Whether a meta key describes the store itself (or a user's snapshot), not the memory
  /// (never exported, never imported).
  static func isLocalMetaKey(_ key: String) -> Bool {
    StoreMetaKey.isLocal(key)
  }

  /// The export format version this engine writes; version 1 files (no `end` line) still import.
  static let exportVersion = 2

  /// Bytes of whole lines gathered before they are handed on.
  static let exportChunkBytes = 1 << 20

  /// Writes the whole memory as JSONL: a header line, one line per row of every table
  @discardableResult
  func export(to path: String) throws -> Int {
    try open.check()
    return try Self.export(store: store, to: path == "-" ? .standardOutput : .file(path))
  }

  /// Streams the export to `sink` in chunks of whole lines (each chunk is valid UTF-8 on
  @discardableResult
  func export(into sink: (UnsafeRawBufferPointer) throws -> Void) throws -> Int {
    try open.check()
    return try Self.writeExport(store: store, into: sink)
  }

  /// Exports the memory at `path` without opening an engine: the database is opened
  @discardableResult
  static func export(databaseAt path: String, user: String, to destination: ExportDestination) throws -> Int {
    let store = try openReadOnly(path, user: user)
    defer { store.close() }
    return try export(store: store, to: destination)
  }

  /// Streams the export of the memory at `path` to `sink` (see ``export(into:)``).
  @discardableResult
  static func export(
    databaseAt path: String, user: String, into sink: (UnsafeRawBufferPointer) throws -> Void
  ) throws -> Int {
    let store = try openReadOnly(path, user: user)
    defer { store.close() }
    return try writeExport(store: store, into: sink)
  }

  /// The store at `location` for `user`, read-only with one reader.
  static func openReadOnly(_ location: String, user: String) throws -> any MemoryStore {
    var options = StoreFactory.Options()
    options.readOnly = true
    options.readerCount = 1
    options.user = user
    return try StoreFactory.open(StoreLocation(parsing: location), options: options)
  }

  static func export(store: any MemoryStore, to destination: ExportDestination) throws -> Int {
    switch destination {
    case .standardOutput:
      return try writeExport(store: store) { chunk in
        var remaining = chunk
        while let base = remaining.baseAddress, !remaining.isEmpty {
          let written = write(1, base, remaining.count)
          if written < 0 {
            if errno == EINTR { continue }
            throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO)
          }
          remaining = UnsafeRawBufferPointer(rebasing: remaining[written...])
        }
      }
    case .file(let path):
      let file = try SecureTemporaryFile(beside: path)
      let lines = try writeExport(store: store) { try file.write($0) }
      try file.commit()
      return lines
    }
  }

  /// The export itself: one read transaction (a consistent snapshot), rows streamed.
  static func writeExport(store: any MemoryStore, into sink: (UnsafeRawBufferPointer) throws -> Void) throws
    -> Int
  {
    try store.readTransaction { connection in
      var encoder = ExportEncoder(capacity: exportChunkBytes + (64 << 10))
      var checksum = ExportChecksum()
      var lines = 0
      func flush() throws {
        try encoder.bytes.withUnsafeBytes { chunk in
          checksum.update(chunk)
          try sink(chunk)
        }
        encoder.bytes.removeAll(keepingCapacity: true)
      }
      let model = try connection.embeddingModel()
      encoder.append(#"{"type":"header","format":"engram-export","version":"#)
      encoder.appendInteger(Int64(exportVersion))
      encoder.append(#","schema_version":"#)
      encoder.appendInteger(Int64(try connection.userVersion()))
      encoder.append(#","embedding_model":"#)
      if let model { encoder.appendString(model.name) } else { encoder.append("null") }
      encoder.append(#","embedding_dimension":"#)
      if let model { encoder.appendInteger(Int64(model.dimension)) } else { encoder.append("null") }
      encoder.append(#","exported_at":"#)
      encoder.appendString(ISO8601DateFormatter().string(from: Date()))
      encoder.append("}\n")
      lines += 1
      for (table, type, order) in exportTables {
        var count = 0
        var keys: [[UInt8]] = []
        var keyColumn = -1
        var prefix = ExportEncoder(capacity: 32)
        prefix.append(#"{"type":"#)
        prefix.appendString(type)
        let header = { (names: [String]) in
          count = names.count
          for (column, name) in names.enumerated() {
            if name == "key" { keyColumn = column }
            var key = ExportEncoder(capacity: name.utf8.count + 4)
            key.append(",")
            key.appendString(name)
            key.append(":")
            keys.append(key.bytes)
          }
        }
        try connection.forEachExportedRow(of: table, orderedBy: order, columns: header) { row in
          if table == "meta", keyColumn >= 0, isLocalMetaKey(row.string(at: keyColumn)) { return }
          encoder.bytes.append(contentsOf: prefix.bytes)
          for column in 0..<count {
            encoder.bytes.append(contentsOf: keys[column])
            encoder.appendColumn(row, column)
          }
          encoder.append("}\n")
          lines += 1
          if encoder.bytes.count >= exportChunkBytes { try flush() }
        }
      }
      try flush()
      encoder.append(#"{"type":"end","lines":"#)
      encoder.appendInteger(Int64(lines))
      encoder.append(#","checksum":"#)
      encoder.appendString(checksum.text)
      encoder.append("}\n")
      try encoder.bytes.withUnsafeBytes { try sink($0) }
      return lines + 1
    }
  }

}
