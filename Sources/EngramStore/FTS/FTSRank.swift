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
    let code = api.pointee.xCreateFunction(api, "engram_bm25", nil, rank, nil)
    guard code == SQLITE_OK else {
      throw SQLiteError.from(db, resultCode: code, sql: "fts5_api.xCreateFunction(engram_bm25)")
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

  /// Per-query statistics, cached as the query's auxiliary data: [phrases, average length,
  /// idf of each phrase].
  private static func statistics(
    _ api: UnsafePointer<Fts5ExtensionApi>, _ fts: OpaquePointer
  ) -> UnsafeMutablePointer<Double>? {
    if let cached = api.pointee.xGetAuxdata(fts, 0) { return cached.assumingMemoryBound(to: Double.self) }
    let phrases = Int(api.pointee.xPhraseCount(fts))
    var rows: Int64 = 0
    var tokens: Int64 = 0
    guard api.pointee.xRowCount(fts, &rows) == SQLITE_OK,
      api.pointee.xColumnTotalSize(fts, -1, &tokens) == SQLITE_OK,
      let raw = malloc((phrases + 2) * MemoryLayout<Double>.stride)
    else { return nil }
    let values = raw.bindMemory(to: Double.self, capacity: phrases + 2)
    values[0] = Double(phrases)
    values[1] = rows > 0 ? Double(tokens) / Double(rows) : 1
    for phrase in 0..<phrases {
      var matching: Int64 = 0
      let code = api.pointee.xQueryPhrase(fts, Int32(phrase), &matching) { _, _, counter in
        counter?.assumingMemoryBound(to: Int64.self).pointee += 1
        return SQLITE_OK
      }
      guard code == SQLITE_OK else {
        free(raw)
        return nil
      }
      values[2 + phrase] = idf(rows: rows, matching: matching)
    }
    guard api.pointee.xSetAuxdata(fts, raw, { free($0) }) == SQLITE_OK else { return nil }
    return values
  }

  /// The auxiliary function: `-score` of the current row.
  private static let rank: fts5_extension_function = { api, fts, context, _, _ in
    guard let api, let fts, let context else { return }
    guard let stats = statistics(api, fts) else {
      sqlite3_result_error(context, "engram_bm25: cannot read the index statistics", -1)
      return
    }
    let phrases = Int(stats[0])
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
      for index in 0..<phrases where frequencies[index] > 0 {
        score += termScore(
          idf: stats[2 + index], frequency: frequencies[index], length: Int(length), averageLength: stats[1])
      }
    }
    sqlite3_result_double(context, -score)
  }
}
