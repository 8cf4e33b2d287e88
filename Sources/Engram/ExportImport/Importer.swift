import EngramCore
import EngramEmbeddings
import EngramStore
import Foundation

/// Imports an export into an empty memory, all or nothing, line by line.
struct Importer: Sendable {
  let open: OpenState
  /// Where the memory lives (the database file, or the URI without its password).
  let location: String
  /// The vectors imported must be this embedder's.
  let embedder: any Embedder
  /// Writes tracked by the vector index, marked stale after the import.
  let vectors: VectorIndexKeeper
  /// Forgotten after an import.
  let speakers: SpeakerDirectory

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

  /// Imports an export into this memory, which must be empty, or already hold exactly this
  /// export's rows (then nothing is imported and 0 returned); all or nothing.
  @discardableResult
  func importExport(from path: String) throws -> Int {
    try open.check()
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
            let object = JSONValue.parse(bytes: body)?.objectValue
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
    guard let version = header.object["version"]?.intValue, version == 1 || version == Exporter.exportVersion
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
    let tableOf = Dictionary(uniqueKeysWithValues: Exporter.exportTables.map { ($0.type, $0.table) })
    let dbPath = location
    let dimension = embedder.dimension
    let count = try vectors.writeTracked { connection -> Int in
      // A memory that already holds items takes only the export it holds already (a re-run
      // of the same import): every row is found as it is and nothing is written.
      let reimport = try connection.holdsItems()
      try connection.deferForeignKeys()
      var count = 0
      var sawEnd = false
      // The first export line of each table: rows follow in row-id order, so a row's line is
      // its table's first line plus the number of its rows before it (see below).
      var firstLine: [String: Int] = [:]
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
        if table == "meta", let key = object["key"]?.stringValue, Exporter.isLocalMetaKey(key) {
          continue
        }
        if table == "messages" || table == "memories" || table == "summaries" {
          try Self.checkImportedText(columns: columns, values: values, type: type, line: line)
        }
        if table == "embeddings" {
          try Self.checkImportedVector(columns: columns, values: values, dimension: dimension, line: line)
        }
        if reimport {
          // Settings (meta, preferences, skill state) may have changed since; rows may not.
          if table == "meta" || table == "preferences" || table == "skill_state" { continue }
          guard try connection.exportedRowExists(in: table, columns: columns, values: values) else {
            throw EngramError.importTargetNotEmpty(path: dbPath)
          }
          continue
        }
        do {
          try connection.insertExportedRow(
            into: table, columns: columns, values: values,
            replacing: table == "meta" || table == "preferences" || table == "skill_state")
        } catch let error as any StoreDatabaseError {
          throw EngramError.malformedExport(line: line, reason: error.message)
        }
        if firstLine[table] == nil { firstLine[table] = line }
        count += 1
      }
      if version >= 2 && !sawEnd {
        throw EngramError.malformedExport(
          line: reader.lineNumber + 1, reason: "the file ends without its end line (truncated)")
      }
      if reimport { return 0 }
      // References are checked at commit (they may point forward); a dangling one is named by
      // its line here, before the commit would fail with SQLite's bare constraint error.
      if let dangling = try connection.firstDanglingReference() {
        var line = firstLine[dangling.table] ?? reader.lineNumber
        if let rowid = dangling.rowid, let before = try connection.userRows(in: dangling.table, before: rowid)
        {
          line += before
        }
        throw EngramError.malformedExport(
          line: line, reason: "it refers to a row of \(dangling.parent) that the export does not hold")
      }
      return count
    }
    // The index is rebuilt from the imported rows when next needed; building it here would
    // hold every vector in memory at once.
    vectors.markStale()
    speakers.invalidate()
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

  /// Refuses a turn, memory or summary longer than `TurnText.maxBytes`: an import restores
  /// rows as they were (ids, embeddings), so a longer text cannot be cut into parts here.
  static func checkImportedText(columns: [String], values: [SQLValue], type: String, line: Int) throws {
    guard let column = columns.firstIndex(of: "content"), case .text(let text) = values[column] else {
      return
    }
    let bytes = text.utf8.count
    guard bytes <= TurnText.maxBytes else {
      throw EngramError.malformedExport(
        line: line,
        reason:
          "the \(type)'s text is \(bytes) bytes, more than the \(TurnText.maxBytes) one stored item holds "
          + "(ingest a long conversation instead: it is stored in parts)")
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
