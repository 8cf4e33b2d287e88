// libFuzzer entry: any text becomes a MATCH expression (or nil) that FTS5 accepts and runs
// on an in-memory database without a syntax error. Built by scripts/fuzz.sh.
import EngramStore
import Foundation

nonisolated(unsafe) let ftsDatabase: Connection = {
  let connection = try! Connection(path: ":memory:")
  try! connection.execute(
    "CREATE VIRTUAL TABLE docs USING fts5(body, tokenize = 'unicode61 remove_diacritics 2')")
  for text in ["Alice climbs on Saturdays", "我周末去攀岩了", "the dentist on Tuesday", "naïve café déjà vu"] {
    try! connection.run("INSERT INTO docs(body) VALUES (engram_fts_text(?1))", [.text(text)])
  }
  return connection
}()

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzFTSQuery(_ start: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
  let text = String(decoding: UnsafeBufferPointer(start: start, count: count), as: UTF8.self)
  guard let expression = FTSQuery.matchExpression(for: text) else { return 0 }
  do {
    _ = try ftsDatabase.prepare("SELECT rowid FROM docs WHERE docs MATCH ?1").bindingAndMapRows(expression)
  } catch {
    fatalError("MATCH \(expression.debugDescription) from \(text.debugDescription) failed: \(error)")
  }
  return 0
}

extension Statement {
  func bindingAndMapRows(_ expression: String) throws -> [Int64] {
    try bind([.text(expression)])
    return try map { $0.int64(at: 0) }
  }
}
