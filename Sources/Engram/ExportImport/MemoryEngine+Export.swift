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

extension MemoryEngine {
  /// Tables in export order (referenced rows before the rows that reference them) and the
  /// line `type` of each, per `schemas/memory-export.schema.json`. Columns are read from
  /// the database itself, so the export follows the migrations without restating them.
  static let exportTables: [(table: String, type: String, order: String)] = [
    ("meta", "meta", "key"), ("sessions", "session", "id"), ("summaries", "summary", "id"),
    ("messages", "message", "id"), ("memories", "memory", "id"), ("embeddings", "embedding", "id"),
    ("preferences", "preference", "key"), ("skill_state", "skill_state", "skill_id"),
    ("agent_items", "agent_item", "id"), ("traces", "trace", "id"), ("pending_calls", "pending_call", "id"),
  ]

  /// Meta keys that describe the file itself, not the memory (never exported).
  static let localMetaKeys: Set<String> = [
    "database_id", "embedding_model", "embedding_dimension", Connection.embeddingEpochKey,
    Connection.vectorSnapshotKey, Connection.embeddingChangesFloorKey,
  ]

  /// The export format version this engine writes; version 1 files (no `end` line) still import.
  static let exportVersion = 2

  /// Bytes of whole lines gathered before they are handed on.
  static let exportChunkBytes = 1 << 20

  /// Writes the whole memory as JSONL: a header line, one line per row of every table
  /// (vectors as base64 of their stored bytes), and an `end` line with the number of lines
  /// before it and their checksum. Returns the number of lines, header and end included.
  ///
  /// A file is written to a temporary file created exclusively with mode 0600 beside it,
  /// then renamed into place; `-` writes to standard output.
  /// - Complexity: O(rows) time; memory bounded by one chunk of lines (about 1 MiB) and
  ///   the longest row, whatever the memory's size.
  @discardableResult
  public func export(to path: String) throws -> Int {
    try checkOpen()
    return try Self.export(database: database, to: path == "-" ? .standardOutput : .file(path))
  }

  /// Streams the export to `sink` in chunks of whole lines (each chunk is valid UTF-8 on
  /// its own). Returns the number of lines.
  @discardableResult
  public func export(into sink: (UnsafeRawBufferPointer) throws -> Void) throws -> Int {
    try checkOpen()
    return try Self.writeExport(database: database, into: sink)
  }

  /// Exports the memory at `path` without opening an engine: the database is opened
  /// read-only and no vector index is loaded, so memory stays bounded however large the
  /// memory is. Returns the number of lines.
  /// - Throws: store errors (a missing, damaged or newer database), `SecureTemporaryFile.Failure`.
  @discardableResult
  public static func export(databaseAt path: String, to destination: ExportDestination) throws -> Int {
    var configuration = Database.Configuration()
    configuration.readOnly = true
    configuration.readerCount = 1
    let database = try Database(path: path, configuration: configuration)
    defer { database.close() }
    return try export(database: database, to: destination)
  }

  /// Streams the export of the memory at `path` to `sink` (see ``export(into:)``).
  @discardableResult
  public static func export(databaseAt path: String, into sink: (UnsafeRawBufferPointer) throws -> Void)
    throws -> Int
  {
    var configuration = Database.Configuration()
    configuration.readOnly = true
    configuration.readerCount = 1
    let database = try Database(path: path, configuration: configuration)
    defer { database.close() }
    return try writeExport(database: database, into: sink)
  }

  static func export(database: Database, to destination: ExportDestination) throws -> Int {
    switch destination {
    case .standardOutput:
      return try writeExport(database: database) { chunk in
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
      let lines = try writeExport(database: database) { try file.write($0) }
      try file.commit()
      return lines
    }
  }

  /// The export itself: one read transaction (a consistent snapshot), rows streamed.
  static func writeExport(database: Database, into sink: (UnsafeRawBufferPointer) throws -> Void) throws
    -> Int
  {
    try database.read { connection in
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
        let statement = try connection.prepare("SELECT * FROM \(table) ORDER BY \(order)")
        let count = statement.columnCount
        var keys: [[UInt8]] = []
        var keyColumn = -1
        for column in 0..<count {
          let name = statement.columnName(at: column)
          if name == "key" { keyColumn = column }
          var key = ExportEncoder(capacity: name.utf8.count + 4)
          key.append(",")
          key.appendString(name)
          key.append(":")
          keys.append(key.bytes)
        }
        var prefix = ExportEncoder(capacity: 32)
        prefix.append(#"{"type":"#)
        prefix.appendString(type)
        try statement.forEachRow { row in
          if table == "meta", keyColumn >= 0, localMetaKeys.contains(row.string(at: keyColumn)) { return }
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

  static func importValue(_ value: JSONValue, line: Int) throws -> SQLValue {
    switch value {
    case .null: return .null
    case .bool(let flag): return .integer(flag ? 1 : 0)
    case .int(let number): return .integer(Int64(number))
    case .double(let number): return .real(number)
    case .string(let text): return .text(text)
    case .object(let members):
      guard members.count == 1, let encoded = members["base64"]?.stringValue,
        let data = Data(base64Encoded: encoded)
      else {
        throw EngramError.malformedExport(line: line, reason: "a value object must be {\"base64\": ...}")
      }
      return .blob([UInt8](data))
    case .array: throw EngramError.malformedExport(line: line, reason: "arrays are not column values")
    }
  }

  /// Imports an export into this memory, which must be empty; all or nothing.
  ///
  /// The file is read line by line in one transaction, so memory stays bounded by the
  /// longest line whatever the export's size. Ids, times, vectors and every other column
  /// are kept exactly, so exporting the result gives the same lines. Every line must be
  /// valid UTF-8; every vector must have the embedder's dimension and finite components
  /// whose squares sum to a finite, non-zero length; a version 2 export must end with its
  /// `end` line, whose line count and checksum must match (a truncated or altered file is
  /// refused). The vector index is rebuilt from the imported rows on the next search (or
  /// the next open). Returns the number of rows imported.
  ///
  /// - Throws: `EngramError.importTargetNotEmpty`, `EngramError.malformedExport` (with the
  ///   line), `EngramError.invalidExportVector` (with the line), `ImportError.invalidUTF8`
  ///   (with the line), `ImportError.unreadable`, `EngramError.modelMismatch` when the
  ///   export's vectors come from another model.
  @discardableResult
  public func importExport(from path: String) throws -> Int {
    try checkOpen()
    let reader = try ExportLineReader(path: path)
    var checksum = ExportChecksum()
    let shown = path == "-" ? "standard input" : path

    // Parses the next non-blank line (nil at the end), checking its UTF-8 and adding its
    // bytes to the checksum unless it is the end line.
    func nextObject() throws -> (line: Int, object: [String: JSONValue])? {
      var result: (Int, [String: JSONValue])?
      var found = false
      while !found {
        let more = try reader.nextLine(path: shown) { raw in
          let line = reader.lineNumber
          guard String(validating: raw, as: UTF8.self) != nil else {
            throw ImportError.invalidUTF8(path: shown, line: line)
          }
          if raw.allSatisfy({ $0 == 0x20 || $0 == 0x0D || $0 == 0x09 || $0 == 0x0A }) {
            checksum.update(raw)
            return
          }
          let body = UnsafeBufferPointer(rebasing: raw[..<(raw.last == 0x0A ? raw.count - 1 : raw.count)])
          guard
            let object = (JSONValue.FastParser.parse(body) ?? (try? JSONValue.parse(Data(body))))?.objectValue
          else {
            throw EngramError.malformedExport(line: line, reason: "not a JSON object")
          }
          if object["type"]?.stringValue != "end" { checksum.update(raw) }
          result = (line, object)
          found = true
        }
        if !more { return nil }
      }
      return result
    }

    guard let header = try nextObject(), header.object["type"] == "header",
      header.object["format"] == "engram-export"
    else {
      throw EngramError.malformedExport(line: 1, reason: "missing engram-export header")
    }
    guard let version = header.object["version"]?.intValue, version == 1 || version == Self.exportVersion
    else {
      throw EngramError.malformedExport(line: header.line, reason: "unsupported export version")
    }
    if let model = header.object["embedding_model"]?.stringValue,
      let dimension = header.object["embedding_dimension"]?.intValue,
      model != embedder.modelID || Int(dimension) != embedder.dimension
    {
      throw EngramError.modelMismatch(
        database: model, databaseDimension: Int(dimension), configured: embedder.modelID,
        configuredDimension: embedder.dimension)
    }
    let tableOf = Dictionary(uniqueKeysWithValues: Self.exportTables.map { ($0.type, $0.table) })
    let dbPath = self.path
    let dimension = embedder.dimension
    let count = try writeTracked { connection -> Int in
      for table in ["sessions", "messages", "summaries", "memories", "embeddings"] {
        if try connection.scalarInt("SELECT count(*) FROM \(table)") ?? 0 > 0 {
          throw EngramError.importTargetNotEmpty(path: dbPath)
        }
      }
      try connection.execute("PRAGMA defer_foreign_keys = ON")
      var count = 0
      var sawEnd = false
      while let (line, object) = try nextObject() {
        guard !sawEnd else {
          throw EngramError.malformedExport(line: line, reason: "a line after the end line")
        }
        guard let type = object["type"]?.stringValue else {
          throw EngramError.malformedExport(line: line, reason: "unknown line type")
        }
        if type == "end", version >= 2 {
          try Self.checkEnd(object, line: line, lines: line - 1, checksum: checksum)
          sawEnd = true
          continue
        }
        guard let table = tableOf[type] else {
          throw EngramError.malformedExport(line: line, reason: "unknown line type")
        }
        var columns: [String] = []
        var values: [SQLValue] = []
        for (key, value) in object.sorted(by: { $0.key < $1.key }) where key != "type" {
          guard !key.isEmpty, key.utf8.allSatisfy({ Self.isColumnNameByte($0) }) else {
            throw EngramError.malformedExport(line: line, reason: "invalid column name '\(key)'")
          }
          columns.append(key)
          values.append(try Self.importValue(value, line: line))
        }
        if table == "meta", let key = object["key"]?.stringValue, Self.localMetaKeys.contains(key) {
          continue
        }
        if table == "embeddings" {
          try Self.checkImportedVector(columns: columns, values: values, dimension: dimension, line: line)
        }
        let placeholders = (1...max(columns.count, 1)).map { "?\($0)" }.joined(separator: ", ")
        let verb =
          table == "meta" || table == "preferences" || table == "skill_state" ? "INSERT OR REPLACE" : "INSERT"
        do {
          try connection.run(
            "\(verb) INTO \(table) (\(columns.joined(separator: ", "))) VALUES (\(placeholders))", values)
        } catch let error as SQLiteError {
          throw EngramError.malformedExport(line: line, reason: error.message)
        }
        count += 1
      }
      if version >= 2 && !sawEnd {
        throw EngramError.malformedExport(
          line: reader.lineNumber + 1, reason: "the file ends without its end line (truncated)")
      }
      return count
    }
    // The index is rebuilt from the imported rows when next needed; building it here would
    // hold every vector in memory at once.
    indexState.withLock { $0.stale = true }
    speakers.withLock { $0 = nil }
    return count
  }

  /// Column names are ASCII letters and underscores (checked on bytes: per row, per column).
  static func isColumnNameByte(_ byte: UInt8) -> Bool {
    (byte >= 0x61 && byte <= 0x7A) || (byte >= 0x41 && byte <= 0x5A) || byte == 0x5F
  }

  /// Checks an `end` line against the lines read before it.
  static func checkEnd(_ object: [String: JSONValue], line: Int, lines: Int, checksum: ExportChecksum) throws
  {
    guard let declared = object["lines"]?.intValue, let sum = object["checksum"]?.stringValue else {
      throw EngramError.malformedExport(line: line, reason: "the end line needs \"lines\" and \"checksum\"")
    }
    guard declared == lines else {
      throw EngramError.malformedExport(
        line: line,
        reason: "the end line counts \(declared) lines but \(lines) precede it (lines were lost or added)")
    }
    guard sum == checksum.text else {
      throw EngramError.malformedExport(
        line: line, reason: "the checksum does not match: the file was changed or damaged after export")
    }
  }

  /// Refuses an embedding row whose vector the index could not hold: a dimension other
  /// than the embedder's, a blob of the wrong length for its encoding, NaN or infinity, a
  /// component so large that the vector's length overflows, or all zeros.
  static func checkImportedVector(columns: [String], values: [SQLValue], dimension: Int, line: Int) throws {
    func value(_ name: String) -> SQLValue? { columns.firstIndex(of: name).map { values[$0] } }
    guard case .integer(let declared)? = value("dimension"), Int(declared) == dimension else {
      throw EngramError.invalidExportVector(line: line, reason: .wrongDimension)
    }
    var encoding = "f32"
    if case .text(let text)? = value("encoding") { encoding = text }
    guard case .blob(let blob)? = value("vector"),
      blob.count == (encoding == "i8" ? EmbeddingCodec.int8Length(dimension: dimension) : 4 * dimension)
    else {
      throw EngramError.invalidExportVector(line: line, reason: .wrongDimension)
    }
    var vector = [Float](repeating: 0, count: dimension)
    let decoded = blob.withUnsafeBytes { raw in
      vector.withUnsafeMutableBufferPointer { EmbeddingCodec.decode(raw, dimension: dimension, into: $0) }
    }
    guard decoded else { throw EngramError.invalidExportVector(line: line, reason: .wrongDimension) }
    var squares: Float = 0
    for component in vector {
      guard component.isFinite else { throw EngramError.invalidExportVector(line: line, reason: .nonFinite) }
      squares += component * component
    }
    guard squares.isFinite else { throw EngramError.invalidExportVector(line: line, reason: .overflow) }
    guard squares > 0 else { throw EngramError.invalidExportVector(line: line, reason: .zero) }
  }
}
