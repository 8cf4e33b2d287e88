import CSQLite
import Foundation

/// `engram_bm25(fts)`: the BM25 rank of the current match of an FTS5 table, an FTS5
/// auxiliary function registered on every connection and used instead of FTS5's built-in
/// `bm25()` (same sign convention: negative, lower is better, so `ORDER BY engram_bm25(t)`
/// ranks best first).
///
/// It differs from `bm25()` in two documented ways, both chosen on the LoCoMo dev split
/// (`Benchmarks/engram-bench`, keyword hit@10):
/// - the inverse document frequency is Lucene's, `ln(1 + (N - n + 0.5) / (n + 0.5))`, which
///   stays positive, where `bm25()` uses `ln((N - n + 0.5) / (n + 0.5))` floored at 1e-6: a
///   term found in more than half of the documents (a speaker's name in a two-person
///   conversation, where every turn starts with it) still counts a little instead of nothing;
/// - length normalization `b` is 0.4 instead of 0.75 (`k1` stays 1.2): a long turn that
///   mentions the query's terms is penalized less for its length. On dev, every `b` from 0.2
///   to 0.5 scores within 0.5 point of each other; 0.4 is the middle of that plateau.
///
/// N is the table's row count, n the number of rows matching a phrase (counted once per
/// query and cached), the term frequency a phrase's instances in the row, and the lengths
/// come from the table's `docsize` (so it works on contentless tables).
///
/// Two optional arguments serve the pruned search (`FTSPruning`):
/// `engram_bm25(fts, skip, counts)` ignores the first `skip` phrases of the expression (they
/// repeat later ones, to restrict which rows match), and `counts`, when not NULL, is a blob
/// of the remaining phrases' document counts over the whole table (little-endian Int64, as
/// `engram_fts_counts` returns them), used instead of counting them again. The score of a
/// row is then the one the plain expression of the remaining phrases gives it, bit for bit.
///
/// `engram_fts_counts(fts)` returns, for the current match, a blob of little-endian Int64:
/// the table's row count, then each phrase's document count (the N and n above).
public enum FTSRank {
  /// BM25 term-frequency saturation.
  public static let k1 = 1.2
  /// BM25 length normalization.
  public static let b = 0.4

  /// The inverse document frequency of a phrase found in `matching` of `rows` rows.
  public static func idf(rows: Int64, matching: Int64) -> Double {
    log(1 + (Double(rows - matching) + 0.5) / (Double(matching) + 0.5))
  }

  /// The BM25 contribution of one phrase.
  public static func termScore(idf: Double, frequency: Int, length: Int, averageLength: Double) -> Double {
    let f = Double(frequency)
    let norm = 1 - b + b * Double(length) / max(averageLength, 1)
    return idf * f * (k1 + 1) / (f + k1 * norm)
  }

  /// Registers `engram_bm25` with the FTS5 module of `db`.
  static func register(on db: OpaquePointer) throws {
    guard let api = fts5API(db) else {
      throw SQLiteError.from(db, resultCode: SQLITE_ERROR, sql: "SELECT fts5(?1)")
    }
    for (name, function) in [("engram_bm25", rank), ("engram_fts_counts", counts)] {
      let code = api.pointee.xCreateFunction(api, name, nil, function, nil)
      guard code == SQLITE_OK else {
        throw SQLiteError.from(db, resultCode: code, sql: "fts5_api.xCreateFunction(\(name))")
      }
    }
  }

  /// The connection's `fts5_api` (the documented `SELECT fts5(?1)` handshake).
  private static func fts5API(_ db: OpaquePointer) -> UnsafeMutablePointer<fts5_api>? {
    var statement: OpaquePointer?
    guard sqlite3_prepare_v2(db, "SELECT fts5(?1)", -1, &statement, nil) == SQLITE_OK else { return nil }
    defer { sqlite3_finalize(statement) }
    var api: UnsafeMutablePointer<fts5_api>?
    let type: StaticString = "fts5_api_ptr"
    let bound = withUnsafeMutablePointer(to: &api) { pointer -> Bool in
      let typeName = UnsafeRawPointer(type.utf8Start).assumingMemoryBound(to: CChar.self)
      guard sqlite3_bind_pointer(statement, 1, pointer, typeName, nil) == SQLITE_OK else { return false }
      return sqlite3_step(statement) == SQLITE_ROW
    }
    return bound ? api : nil
  }

  /// The row count and each phrase's document count over the whole table (the phrase
  /// run as its own query), nil on a read error.
  private static func documentCounts(
    _ api: UnsafePointer<Fts5ExtensionApi>, _ fts: OpaquePointer, from first: Int, to end: Int
  ) -> (rows: Int64, matching: [Int64])? {
    var rows: Int64 = 0
    guard api.pointee.xRowCount(fts, &rows) == SQLITE_OK else { return nil }
    var matching: [Int64] = []
    matching.reserveCapacity(max(end - first, 0))
    for phrase in first..<max(end, first) {
      var count: Int64 = 0
      let code = api.pointee.xQueryPhrase(fts, Int32(phrase), &count) { _, _, counter in
        counter?.assumingMemoryBound(to: Int64.self).pointee += 1
        return SQLITE_OK
      }
      guard code == SQLITE_OK else { return nil }
      matching.append(count)
    }
    return (rows, matching)
  }

  /// Per-query statistics, cached as the query's auxiliary data: [phrases, average length,
  /// phrases skipped, idf of each phrase (0 for a skipped one)]. `arguments` are the
  /// function's optional (skip, counts).
  private static func statistics(
    _ api: UnsafePointer<Fts5ExtensionApi>, _ fts: OpaquePointer, _ arguments: [OpaquePointer?]
  ) -> Result<UnsafeMutablePointer<Double>, StatisticsError> {
    if let cached = api.pointee.xGetAuxdata(fts, 0) {
      return .success(cached.assumingMemoryBound(to: Double.self))
    }
    let phrases = Int(api.pointee.xPhraseCount(fts))
    let skip = arguments.first.map { Int(sqlite3_value_int64($0)) } ?? 0
    guard skip >= 0, skip <= phrases else { return .failure(.arguments) }
    var supplied: [Int64]?
    if arguments.count > 1, let value = arguments[1], sqlite3_value_type(value) != SQLITE_NULL {
      let bytes = Int(sqlite3_value_bytes(value))
      guard bytes == (phrases - skip) * 8, let blob = sqlite3_value_blob(value) else {
        return .failure(.arguments)
      }
      supplied = (0..<(phrases - skip)).map {
        Int64(littleEndian: blob.loadUnaligned(fromByteOffset: $0 * 8, as: Int64.self))
      }
    }
    var tokens: Int64 = 0
    guard api.pointee.xColumnTotalSize(fts, -1, &tokens) == SQLITE_OK,
      let counted = documentCounts(api, fts, from: skip, to: supplied == nil ? phrases : skip)
    else { return .failure(.read) }
    let rows = counted.rows
    let matching = supplied ?? counted.matching
    guard let raw = malloc((phrases + 3) * MemoryLayout<Double>.stride) else { return .failure(.read) }
    let values = raw.bindMemory(to: Double.self, capacity: phrases + 3)
    values[0] = Double(phrases)
    values[1] = rows > 0 ? Double(tokens) / Double(rows) : 1
    values[2] = Double(skip)
    for phrase in 0..<phrases {
      values[3 + phrase] = phrase < skip ? 0 : idf(rows: rows, matching: matching[phrase - skip])
    }
    guard api.pointee.xSetAuxdata(fts, raw, { free($0) }) == SQLITE_OK else { return .failure(.read) }
    return .success(values)
  }

  enum StatisticsError: Error {
    case read, arguments

    var message: String {
      switch self {
      case .read: "engram_bm25: cannot read the index statistics"
      case .arguments: "engram_bm25: skip or counts do not fit the expression's phrases"
      }
    }
  }

  /// The auxiliary function: `-score` of the current row.
  private static let rank: fts5_extension_function = { api, fts, context, argumentCount, arguments in
    guard let api, let fts, let context else { return }
    let values: UnsafeMutablePointer<Double>
    if let cached = api.pointee.xGetAuxdata(fts, 0) {
      values = cached.assumingMemoryBound(to: Double.self)
    } else {
      let list = (0..<Int(argumentCount)).map { arguments?[$0] }
      switch statistics(api, fts, list) {
      case .success(let computed): values = computed
      case .failure(let error):
        sqlite3_result_error(context, error.message, -1)
        return
      }
    }
    let stats = values
    let phrases = Int(stats[0])
    let skip = Int(stats[2])
    var instances: Int32 = 0
    var length: Int32 = 0
    guard api.pointee.xInstCount(fts, &instances) == SQLITE_OK,
      api.pointee.xColumnSize(fts, -1, &length) == SQLITE_OK
    else {
      sqlite3_result_error(context, "engram_bm25: cannot read the row", -1)
      return
    }
    var score = 0.0
    withUnsafeTemporaryAllocation(of: Int.self, capacity: max(phrases, 1)) { frequencies in
      frequencies.initialize(repeating: 0)
      var phrase: Int32 = 0
      var column: Int32 = 0
      var offset: Int32 = 0
      for instance in 0..<instances
      where api.pointee.xInst(fts, instance, &phrase, &column, &offset) == SQLITE_OK && phrase < phrases {
        frequencies[Int(phrase)] += 1
      }
      for index in skip..<phrases where frequencies[index] > 0 {
        score += termScore(
          idf: stats[3 + index], frequency: frequencies[index], length: Int(length), averageLength: stats[1])
      }
    }
    sqlite3_result_double(context, -score)
  }

  /// `engram_fts_counts(fts)`: the row count and each phrase's document count, as a blob of
  /// little-endian Int64.
  private static let counts: fts5_extension_function = { api, fts, context, _, _ in
    guard let api, let fts, let context else { return }
    let phrases = Int(api.pointee.xPhraseCount(fts))
    guard let counted = documentCounts(api, fts, from: 0, to: phrases) else {
      sqlite3_result_error(context, "engram_fts_counts: cannot read the index statistics", -1)
      return
    }
    let values = ([counted.rows] + counted.matching).map(\.littleEndian)
    let size = values.count * MemoryLayout<Int64>.stride
    guard let copy = malloc(size) else {
      sqlite3_result_error_nomem(context)
      return
    }
    values.withUnsafeBytes { copy.copyMemory(from: $0.baseAddress!, byteCount: size) }
    sqlite3_result_blob(context, copy, Int32(size)) { free($0) }
  }
}
