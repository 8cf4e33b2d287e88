import EngramStore
import Foundation

extension MemoryEngine {
  /// Tables in export order (referenced rows before the rows that reference them) and the
  /// line `type` of each, per `schemas/memory-export.schema.json`. Columns are read from
  /// the database itself, so the export follows the migrations without restating them.
  static let exportTables: [(table: String, type: String)] = [
    ("meta", "meta"), ("sessions", "session"), ("summaries", "summary"), ("messages", "message"),
    ("memories", "memory"), ("embeddings", "embedding"), ("preferences", "preference"),
    ("skill_state", "skill_state"), ("agent_items", "agent_item"), ("traces", "trace"),
    ("pending_calls", "pending_call"),
  ]

  /// Meta keys that describe the file itself, not the memory (never exported).
  static let localMetaKeys: Set<String> = [
    "database_id", "embedding_model", "embedding_dimension", Connection.embeddingEpochKey,
  ]

  /// Writes the whole memory as JSONL: a header line, then one line per row of every
  /// table, vectors as base64 of their stored bytes. Returns the number of lines.
  ///
  /// The output file is created with mode 0600 and written atomically (temporary file,
  /// then rename); `-` writes to standard output.
  @discardableResult
  public func export(to path: String) throws -> Int {
    try checkOpen()
    var lines: [String] = []
    try database.read { connection in
      let model = try connection.embeddingModel()
      let header: JSONValue = [
        "type": "header", "format": "engram-export", "version": 1,
        "schema_version": .int(try connection.userVersion()),
        "embedding_model": model.map { .string($0.name) } ?? .null,
        "embedding_dimension": model.map { .int($0.dimension) } ?? .null,
        "exported_at": .string(ISO8601DateFormatter().string(from: Date())),
      ]
      lines.append(header.jsonText)
      for (table, type) in Self.exportTables {
        let order =
          table == "meta"
          ? "key" : (table == "preferences" ? "key" : (table == "skill_state" ? "skill_id" : "id"))
        let statement = try connection.prepare("SELECT * FROM \(table) ORDER BY \(order)")
        try statement.forEachRow { row in
          var object: [String: JSONValue] = ["type": .string(type)]
          for column in 0..<row.columnCount {
            object[row.columnName(at: column)] = Self.exportValue(row.value(at: column))
          }
          if table == "meta", let key = object["key"]?.stringValue, Self.localMetaKeys.contains(key) {
            return
          }
          lines.append(JSONValue.object(object).jsonText)
        }
      }
    }
    let text = lines.joined(separator: "\n") + "\n"
    if path == "-" {
      FileHandle.standardOutput.write(Data(text.utf8))
    } else {
      try Self.writePrivately(Data(text.utf8), to: path)
    }
    return lines.count
  }

  static func exportValue(_ value: SQLValue) -> JSONValue {
    switch value {
    case .null: return .null
    case .integer(let number): return .int(Int(number))
    case .real(let number): return .double(number)
    case .text(let text): return .string(text)
    case .blob(let bytes): return .object(["base64": .string(Data(bytes).base64EncodedString())])
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

  /// Writes `data` to `path` with mode 0600, atomically.
  static func writePrivately(_ data: Data, to path: String) throws {
    let temporary = path + ".tmp-\(getpid())"
    guard
      FileManager.default.createFile(
        atPath: temporary, contents: data, attributes: [.posixPermissions: 0o600])
    else {
      throw CocoaError(.fileWriteNoPermission, userInfo: [NSFilePathErrorKey: path])
    }
    if rename(temporary, path) != 0 {
      let code = errno
      unlink(temporary)
      throw POSIXError(POSIXErrorCode(rawValue: code) ?? .EIO)
    }
  }

  /// Imports an export into this memory, which must be empty; all or nothing.
  ///
  /// Ids, times, vectors and every other column are kept exactly, so exporting the result
  /// gives the same lines. Returns the number of rows imported.
  ///
  /// - Throws: `EngramError.importTargetNotEmpty`, `EngramError.malformedExport` (with the
  ///   line), `EngramError.modelMismatch` when the export's vectors come from another model.
  @discardableResult
  public func importExport(from path: String) throws -> Int {
    try checkOpen()
    let data: Data
    do {
      data =
        path == "-"
        ? FileHandle.standardInput.readDataToEndOfFile() : try Data(contentsOf: URL(fileURLWithPath: path))
    } catch {
      throw ImportError.unreadable(path: path, reason: (error as NSError).localizedDescription)
    }
    guard String(data: data, encoding: .utf8) != nil else {
      throw ImportError.invalidUTF8(path: path, line: ConversationFile.firstInvalidUTF8Line(data))
    }
    var parsed: [(line: Int, object: [String: JSONValue])] = []
    var lineNumber = 0
    for raw in data.split(separator: 0x0A, omittingEmptySubsequences: false) {
      lineNumber += 1
      if raw.allSatisfy({ $0 == 0x20 || $0 == 0x0D || $0 == 0x09 }) { continue }
      guard let object = (try? JSONValue.parse(Data(raw)))?.objectValue else {
        throw EngramError.malformedExport(line: lineNumber, reason: "not a JSON object")
      }
      parsed.append((lineNumber, object))
    }
    guard let header = parsed.first, header.object["type"] == "header",
      header.object["format"] == "engram-export"
    else {
      throw EngramError.malformedExport(line: parsed.first?.line ?? 1, reason: "missing engram-export header")
    }
    guard header.object["version"]?.intValue == 1 else {
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
    let rows = parsed.dropFirst()
    let dbPath = self.path
    let count = try database.write { connection -> Int in
      for table in ["sessions", "messages", "summaries", "memories", "embeddings"] {
        if try connection.scalarInt("SELECT count(*) FROM \(table)") ?? 0 > 0 {
          throw EngramError.importTargetNotEmpty(path: dbPath)
        }
      }
      try connection.execute("PRAGMA defer_foreign_keys = ON")
      var count = 0
      for (line, object) in rows {
        guard let type = object["type"]?.stringValue, let table = tableOf[type] else {
          throw EngramError.malformedExport(line: line, reason: "unknown line type")
        }
        var columns: [String] = []
        var values: [SQLValue] = []
        for (key, value) in object.sorted(by: { $0.key < $1.key }) where key != "type" {
          guard key.allSatisfy({ $0.isLetter || $0 == "_" }) else {
            throw EngramError.malformedExport(line: line, reason: "invalid column name '\(key)'")
          }
          columns.append(key)
          values.append(try Self.importValue(value, line: line))
        }
        if table == "meta", let key = object["key"]?.stringValue, Self.localMetaKeys.contains(key) {
          continue
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
      return count
    }
    // Rebuild the vector index from what was imported.
    try reloadIndex()
    speakers.withLock { $0 = nil }
    return count
  }
}
