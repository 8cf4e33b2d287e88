import EngramCore
import Foundation

/// The SQL dialects of the stores, and the few words they spell differently. A query both
/// stores run is written once (`$1`, `$2`... placeholders, `$1` the session's user) with
/// these words in it; see ``SQLSession``.
public enum SQLDialect: Sendable, Hashable {
  /// SQLite (`Connection`).
  case sqlite
  /// PostgreSQL (the `EngramPostgres` store).
  case postgresql

  /// The column that holds a row's user.
  public var user: String {
    switch self {
    case .sqlite: "user_id"
    case .postgresql: "user_scope"
    }
  }

  /// `column` is one of the ids of the list parameter `parameter` (`$2`), bound as
  /// ``idList(_:)`` makes it.
  public func column(_ column: String, inIDList parameter: String) -> String {
    switch self {
    case .sqlite: "\(column) IN (SELECT value FROM json_each(\(parameter)))"
    case .postgresql: "\(column) = ANY(\(parameter)::bigint[])"
    }
  }

  /// `ids` as the value of an id list parameter: a JSON array for SQLite's `json_each`, an
  /// array literal for PostgreSQL's `bigint[]`.
  public func idList(_ ids: some Collection<Int64>) -> SQLValue {
    var text = self == .sqlite ? "[" : "{"
    text.reserveCapacity(ids.count * 8 + 2)
    for (position, id) in ids.enumerated() {
      if position > 0 { text += "," }
      text += String(id)
    }
    text += self == .sqlite ? "]" : "}"
    return .text(text)
  }

  /// Whether `text` contains `needle` as a plain substring (no pattern characters).
  public func contains(_ text: String, _ needle: String) -> String {
    switch self {
    case .sqlite: "instr(\(text), \(needle)) > 0"
    case .postgresql: "strpos(\(text), \(needle)) > 0"
    }
  }

  /// A JSON column's text (PostgreSQL's `json` is no text until cast).
  public func jsonText(_ column: String) -> String {
    switch self {
    case .sqlite: column
    case .postgresql: "\(column)::text"
    }
  }

  /// The columns of `R` a record reads (`StoredRecord.init(row:)`): its `selectList` in
  /// SQLite (where a table may keep a smaller form), `id` and its columns elsewhere.
  public func selectList<R: StoredRecord>(_ type: R.Type) -> String {
    switch self {
    case .sqlite: R.selectList
    case .postgresql: (["id"] + R.columns).joined(separator: ", ")
    }
  }

  /// `column` in byte order (SQLite's `BINARY` collation; PostgreSQL's `"C"`), the same
  /// order in every store.
  public func binaryOrder(_ column: String) -> String {
    switch self {
    case .sqlite: column
    case .postgresql: "\(column) COLLATE \"C\""
    }
  }

  /// The greater of two numbers (SQLite's two-argument `max`).
  public func greatest(_ first: String, _ second: String) -> String {
    switch self {
    case .sqlite: "max(\(first), \(second))"
    case .postgresql: "greatest(\(first), \(second))"
    }
  }

  /// The condition that keeps `alias`, a row reached from one of the user's own rows (a turn
  /// of its session, the embedding of its id), to the user, as each store's keys want it:
  /// nothing in SQLite (ids are unique in the file, and the indexes such a lookup takes start
  /// with the session or owner), the user column in PostgreSQL (whose keys start with it).
  public func sameUser(_ alias: String) -> String {
    switch self {
    case .sqlite: "1 = 1"
    case .postgresql: "\(alias).user_scope = $1"
    }
  }

  /// Summary `summary` quotes the turn whose id is parameter `turn` in its structured
  /// summary's `quoted_message_ids` (anything else there quotes nothing).
  public func summary(_ summary: String, quotesTurn turn: String) -> String {
    switch self {
    case .sqlite:
      "EXISTS (SELECT 1 FROM json_each(\(summary).structured, '$.quoted_message_ids') q WHERE q.value = \(turn))"
    case .postgresql:
      """
      json_typeof(\(summary).structured) = 'object'
        AND json_typeof(\(summary).structured -> 'quoted_message_ids') = 'array'
        AND EXISTS (SELECT 1 FROM json_array_elements_text(\(summary).structured -> 'quoted_message_ids') q
                    WHERE q = CAST(\(turn) AS text))
      """
    }
  }

  /// The embeddings that one embedding model and one change log (`embedding_changes`)
  /// govern, as a condition: SQLite keeps one of each for the whole file (its meta is the
  /// store's), PostgreSQL one per user.
  public var embeddingModelScope: String {
    switch self {
    case .sqlite: "1 = 1"
    case .postgresql: "user_scope = $1"
    }
  }

  /// The floor of a change log with none recorded: SQLite's log is trusted only from the
  /// floor its migration or a snapshot recorded (none: nothing is known to be logged),
  /// PostgreSQL's from the store's first change (0).
  public var unprunedChangeLogFloor: Int64 {
    switch self {
    case .sqlite: .max
    case .postgresql: 0
    }
  }
}

/// What a store's session gives the queries written once for every store: SQL run as the
/// session's user, whose rows come back as ``Row``s. A query beside its record (or in
/// `Queries/`) is an extension of the role protocol it belongs to, which refines this one;
/// a backend implements these four requirements, not each query.
///
/// SQL passed here numbers its parameters `$1`, `$2`...: `$1` is always the session's user
/// and `arguments` are `$2` onwards. Table and column names are the schema's (the same in
/// both stores but for the user column, ``SQLDialect/user``).
public protocol SQLSession: AnyObject {
  /// The dialect of the SQL the session runs.
  var dialect: SQLDialect { get }
  /// Runs `sql` (`$1` the user, `arguments` from `$2`); returns the number of rows changed.
  /// - Throws: the backend's error.
  @discardableResult func execute(scoped sql: String, _ arguments: [SQLValue]) throws -> Int
  /// Runs `sql` (`$1` the user, `arguments` from `$2`) and calls `body` with each row, valid
  /// only during the call.
  /// - Throws: the backend's error, or what `body` throws.
  func forEachRow(scoped sql: String, _ arguments: [SQLValue], _ body: (any Row) throws -> Void) throws
  /// Runs `body` in a transaction (a savepoint inside an open one): all of it or nothing.
  /// - Throws: the backend's error, or what `body` throws.
  func atomically<T>(_ body: () throws -> T) throws -> T
}

extension SQLSession {
  /// The rows of `sql` (as `forEachRow(scoped:)`), each read by `read`.
  public func rows<T>(scoped sql: String, _ arguments: [SQLValue] = [], _ read: (any Row) throws -> T) throws
    -> [T]
  {
    var result: [T] = []
    try forEachRow(scoped: sql, arguments) { result.append(try read($0)) }
    return result
  }

  /// The first column of the first row of `sql` as an integer (nil without a row or NULL).
  public func integer(scoped sql: String, _ arguments: [SQLValue] = []) throws -> Int64? {
    try rows(scoped: sql, arguments) { $0.optionalInt64(at: 0) }.first ?? nil
  }
}

extension SQLDialect {
  /// `sql` with its `$N` parameters spelled `?N` (SQLite's numbered parameters); text in
  /// single quotes is left alone.
  static func sqliteParameters(_ sql: String) -> String {
    var bytes = Array(sql.utf8)
    var quoted = false
    for index in bytes.indices {
      let byte = bytes[index]
      if byte == UInt8(ascii: "'") {
        quoted.toggle()
      } else if !quoted, byte == UInt8(ascii: "$"), index + 1 < bytes.count,
        (0x30...0x39).contains(bytes[index + 1])
      {
        bytes[index] = UInt8(ascii: "?")
      }
    }
    return String(decoding: bytes, as: UTF8.self)
  }
}
