/// A lookup of one record table in the SQL every backend speaks alike: columns equal to
/// values, an order, a limit. `RecordQueries.select(_:)` turns it into SQL once for every
/// store, so a new lookup is one function beside its record (`messages(inSession:)` in
/// `Message.swift`, `pendingCalls(status:)`...), not a requirement written for every store.
///
/// Column names come from code (the record's own), never from user text.
public struct RecordQuery<R: StoredRecord>: Sendable, Hashable {
  /// A column that must equal a value.
  public struct Match: Sendable, Hashable {
    /// The column.
    public var column: String
    /// The value (never `.null`: SQL's `=` matches no NULL).
    public var value: SQLValue

    /// `column = value`.
    public init(_ column: String, _ value: SQLValue) {
      self.column = column
      self.value = value
    }
  }

  /// A column to order by.
  public struct Order: Sendable, Hashable {
    /// The column: a number or time (text orders by each dialect's collation, which differ).
    public var column: String
    /// Largest first.
    public var descending: Bool

    /// Orders by `column`, smallest first unless `descending`.
    public init(_ column: String, descending: Bool = false) {
      self.column = column
      self.descending = descending
    }
  }

  /// Every match must hold (besides the row's belonging to the session's user).
  public var matches: [Match]
  /// The order of the rows (`id` breaks no ties unless listed).
  public var order: [Order]
  /// At most this many rows (negative reads as 0); nil for all.
  public var limit: Int?

  /// Rows of `R` matching every one of `matches`, in `order`, at most `limit` of them.
  public init(_ matches: [Match] = [], order: [Order] = [], limit: Int? = nil) {
    self.matches = matches
    self.order = order
    self.limit = limit
  }

  /// The `WHERE` conditions after the user's and the `ORDER BY` and `LIMIT` clauses, with
  /// the parameters after the user's numbered by `placeholder` (from 2).
  public func clauses(placeholder: (Int) -> String) -> (
    conditions: String, tail: String, arguments: [SQLValue]
  ) {
    var arguments: [SQLValue] = []
    var conditions = ""
    for match in matches {
      arguments.append(match.value)
      conditions += " AND \(match.column) = \(placeholder(arguments.count + 1))"
    }
    var tail = ""
    if !order.isEmpty {
      tail += " ORDER BY " + order.map { $0.column + ($0.descending ? " DESC" : "") }.joined(separator: ", ")
    }
    if let limit {
      arguments.append(.integer(Int64(max(0, limit))))
      tail += " LIMIT \(placeholder(arguments.count + 1))"
    }
    return (conditions, tail, arguments)
  }
}
