import Foundation

extension ConversationFile {
  /// Calls `body` with each element of the file's top-level JSON list, parsed on its own,
  /// with its 1-based number and the line it starts on.
  static func forEachRecord(
    _ bytes: UnsafeBufferPointer<UInt8>, path: String,
    _ body: (JSONValue, _ number: Int, _ line: Int) throws(ImportError) -> Void
  ) throws(ImportError) {
    var scanner = JSONScanner(bytes)
    let records: [Range<Int>]
    do {
      records = try scanner.elements(of: try scanner.document())
    } catch {
      throw malformed(error, scanner: &scanner, path: path)
    }
    for (index, range) in records.enumerated() {
      let line = scanner.line(at: range.lowerBound)
      let value: JSONValue
      do {
        value = try scanner.value(range)
      } catch {
        throw malformed(error, scanner: &scanner, path: path, record: "conversation \(index + 1)")
      }
      try body(value, index + 1, line)
    }
  }

  /// Reads an export that is a list of conversations (ChatGPT's, Claude's): one session per
  /// conversation that `session` reads (nil: no text in it), in order.
  /// - Throws: `.empty` when no conversation has a turn; `session`'s errors.
  static func parseConversationList(
    _ bytes: UnsafeBufferPointer<UInt8>, path: String, format: Format,
    session: (JSONValue, _ number: Int, _ line: Int, _ path: String) throws(ImportError) ->
      ConversationSession?
  ) throws(ImportError) -> ConversationFile {
    var sessions: [ConversationSession] = []
    try forEachRecord(bytes, path: path) { (value, number, line) throws(ImportError) in
      if let found = try session(value, number, line, path) { sessions.append(found) }
    }
    guard !sessions.isEmpty else { throw .empty(path: path) }
    return ConversationFile(sessions: sessions, format: format)
  }

  /// A time given as seconds since 1970 (an integer, a decimal or digits in a string);
  /// nil for a missing or null one.
  /// - Throws: `failure` for anything else or a time out of range.
  static func epochSeconds<Failure: Error>(_ value: JSONValue?, _ failure: @autoclosure () -> Failure)
    throws(Failure) -> Date?
  {
    let seconds: Double
    switch value {
    case nil, .null?: return nil
    case .string(let digits)?:
      guard let number = Double(digits) else { throw failure() }
      seconds = number
    case let number?:
      guard let number = number.doubleValue else { throw failure() }
      seconds = number
    }
    guard seconds.isFinite, abs(seconds) < 1e11 else { throw failure() }
    return Date(timeIntervalSince1970: seconds)
  }

  /// An ISO 8601 time (a zone-less one is UTC, as for every date in an import file); nil for
  /// a missing or null one.
  /// - Throws: `failure` for anything else.
  static func isoTime<Failure: Error>(_ value: JSONValue?, _ failure: @autoclosure () -> Failure)
    throws(Failure) -> Date?
  {
    switch value {
    case nil, .null?: return nil
    case .string(let text)?:
      guard let date = DateParser.fileTimestamp(text) else { throw failure() }
      return date
    default: throw failure()
    }
  }

  /// Whether a text is empty once white space is removed.
  static func isBlank(_ text: String) -> Bool {
    text.unicodeScalars.allSatisfy { $0.properties.isWhitespace }
  }
}
