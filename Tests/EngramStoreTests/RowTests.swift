import EngramCore
import EngramTestSupport
import Foundation
import Testing

@testable import EngramStore

/// The backend-neutral row: a row of values (what PostgreSQL's rows become) reads every
/// value as SQLite's statement reads it, and a record reads itself from either the same way.
@Suite(.timeLimit(.minutes(5)), .watchdog) struct RowTests {
  /// Values of every storage class, including text SQLite reads as a number.
  static let values: [SQLValue] = [
    .integer(42), .integer(-7), .integer(.max), .real(3.75), .real(-2.5), .real(1e300), .text("12abc"),
    .text("  -4.5e2x"), .text("9223372036854775808"), .text("-99999999999999999999"), .text("1e"),
    .text(".5"),
    .text("+7."), .text("abc"), .text(""),
    .text("Ünï ✓"), .blob([0x31, 0x32]), .blob([]), .null,
  ]

  @Test func aValueRowConvertsEveryValueAsSQLitesStatementDoes() throws {
    let connection = try Connection(path: ":memory:")
    let placeholders = (1...Self.values.count).map { "?\($0)" }.joined(separator: ", ")
    let statement = try connection.prepare("SELECT \(placeholders)")
    try statement.bind(Self.values)
    #expect(try statement.step())
    let row = ValueRow(Self.values)
    #expect(row.columnCount == statement.columnCount)
    for index in Self.values.indices {
      let value = Self.values[index]
      #expect(row.value(at: index) == statement.value(at: index), "value of \(value)")
      #expect(row.columnType(at: index) == statement.columnType(at: index), "type of \(value)")
      #expect(row.isNull(at: index) == statement.isNull(at: index), "null of \(value)")
      #expect(row.int64(at: index) == statement.int64(at: index), "integer of \(value)")
      #expect(row.double(at: index) == statement.double(at: index), "double of \(value)")
      if case .real = value { continue }  // SQLite prints reals with %!.15g, Swift shortest.
      #expect(row.bytes(at: index) == statement.bytes(at: index), "bytes of \(value)")
      #expect(row.string(at: index) == statement.string(at: index), "text of \(value)")
    }
  }

  @Test func everyRecordReadsItsOwnEncodingBackFromAValueRowAndFromSQLite() throws {
    let directory = try TemporaryDirectory()
    let connection = try makeMigratedConnection(directory)
    try connection.configureEmbeddingModel(model: "hashing", dimension: 3)
    let sessionID = try connection.insert(Session(externalID: "s", title: "Trip", startedAt: t0))
    let messageID = try connection.insert(
      Message(sessionID: sessionID, role: .user, content: "hi", createdAt: t0))
    let memoryID = try connection.insert(Memory(kind: .fact, content: "f", createdAt: t0))
    let records = RecordSamples.records(
      sessionID: sessionID, messageID: messageID, memoryID: memoryID, at: t0)
    for record in records {
      try Self.checkRoundTrip(record, connection)
    }
  }

  private static func checkRoundTrip<R: StoredRecord & Equatable>(_ record: R, _ connection: Connection)
    throws
  {
    var record = record
    record.id = try connection.insert(record)
    let values = try record.encoded()
    #expect(values.count == R.columns.count)
    #expect(try R(row: ValueRow([.integer(record.id!)] + values)) == record, "\(R.self) from its values")
    #expect(try connection.fetch(R.self, id: record.id!) == record, "\(R.self) from SQLite")
  }

  @Test(arguments: RecordSamples.malformedRows.indices)
  func aMalformedRowFailsAlikeFromSQLiteAndFromItsValues(_ index: Int) throws {
    let malformed = RecordSamples.malformedRows[index]
    let connection = try Connection(path: ":memory:")
    let statement = try connection.prepare(malformed.sql)
    #expect(try statement.step())
    #expect(throws: malformed.error) { try RecordSamples.read(malformed.type, statement) }
    let values = ValueRow((0..<statement.columnCount).map { statement.value(at: $0) })
    #expect(throws: malformed.error) { try RecordSamples.read(malformed.type, values) }
  }
}
