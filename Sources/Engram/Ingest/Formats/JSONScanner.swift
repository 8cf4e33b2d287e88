import Foundation

/// Finds the members of a JSON object and the elements of a JSON array by their byte ranges,
/// without building values: an export's outer structure (a list of conversations, a chat's
/// messages) is walked here and each record is parsed on its own, so a large export is never
/// held as one tree of values beside its bytes.
///
/// The scanner checks only what it needs to find boundaries (brackets, strings, commas);
/// each record is then parsed by `JSONValue.parse`, which checks the rest.
struct JSONScanner {
  /// What the scanner found wrong, at a byte offset.
  struct Failure: Error {
    var offset: Int
    var reason: String
  }

  let bytes: UnsafeBufferPointer<UInt8>
  /// The line of the last offset asked for, so numbering records in order stays linear.
  private var lineCache: (offset: Int, line: Int) = (0, 1)

  init(_ bytes: UnsafeBufferPointer<UInt8>) {
    self.bytes = bytes
  }

  /// The 1-based line holding `offset`.
  mutating func line(at offset: Int) -> Int {
    var (from, line) = offset >= lineCache.offset ? lineCache : (0, 1)
    let end = min(offset, bytes.count)
    while from < end {
      if bytes[from] == 0x0A { line += 1 }
      from += 1
    }
    lineCache = (end, line)
    return line
  }

  /// The first offset at or after `offset` that is not JSON whitespace.
  func skipWhitespace(_ offset: Int) -> Int {
    var position = offset
    while position < bytes.count {
      switch bytes[position] {
      case 0x20, 0x0A, 0x0D, 0x09: position += 1
      default: return position
      }
    }
    return position
  }

  /// The range of the whole document's one value (whitespace and a byte-order mark around it
  /// excluded).
  func document() throws(Failure) -> Range<Int> {
    var start = 0
    if bytes.count >= 3, bytes[0] == 0xEF, bytes[1] == 0xBB, bytes[2] == 0xBF { start = 3 }
    start = skipWhitespace(start)
    let end = try valueEnd(start)
    guard skipWhitespace(end) == bytes.count else {
      throw Failure(offset: skipWhitespace(end), reason: "unexpected text after the JSON value")
    }
    return start..<end
  }

  /// The offset just past the value starting at `start`.
  func valueEnd(_ start: Int) throws(Failure) -> Int {
    guard start < bytes.count else { throw Failure(offset: start, reason: "unexpected end of the file") }
    switch bytes[start] {
    case UInt8(ascii: "\""): return try stringEnd(start)
    case UInt8(ascii: "{"), UInt8(ascii: "["):
      var depth = 0
      var position = start
      while position < bytes.count {
        switch bytes[position] {
        case UInt8(ascii: "\""):
          position = try stringEnd(position)
          continue
        case UInt8(ascii: "{"), UInt8(ascii: "["): depth += 1
        case UInt8(ascii: "}"), UInt8(ascii: "]"):
          depth -= 1
          if depth == 0 { return position + 1 }
        default: break
        }
        position += 1
      }
      let kind = bytes[start] == UInt8(ascii: "{") ? "object" : "list"
      let line = 1 + bytes[..<start].reduce(0) { $0 + ($1 == 0x0A ? 1 : 0) }
      throw Failure(
        offset: bytes.count, reason: "the file ends inside the \(kind) that starts on line \(line)")
    default:
      var position = start
      while position < bytes.count {
        switch bytes[position] {
        case UInt8(ascii: ","), UInt8(ascii: "}"), UInt8(ascii: "]"), 0x20, 0x0A, 0x0D, 0x09:
          guard position > start else { throw Failure(offset: start, reason: "expected a value") }
          return position
        default: position += 1
        }
      }
      return position
    }
  }

  /// The offset just past the string starting (with its quote) at `start`.
  func stringEnd(_ start: Int) throws(Failure) -> Int {
    var position = start + 1
    while position < bytes.count {
      switch bytes[position] {
      case UInt8(ascii: "\\"): position += 2
      case UInt8(ascii: "\""): return position + 1
      default: position += 1
      }
    }
    throw Failure(offset: bytes.count, reason: "the file ends inside a string")
  }

  /// The ranges of the elements of the array spanning `range`.
  func elements(of range: Range<Int>) throws(Failure) -> [Range<Int>] {
    guard bytes[range.lowerBound] == UInt8(ascii: "[") else {
      throw Failure(offset: range.lowerBound, reason: "expected a list")
    }
    var result: [Range<Int>] = []
    var position = skipWhitespace(range.lowerBound + 1)
    if position < range.upperBound, bytes[position] == UInt8(ascii: "]") { return [] }
    while position < range.upperBound {
      let end = try valueEnd(position)
      result.append(position..<end)
      position = skipWhitespace(end)
      guard position < range.upperBound else { break }
      if bytes[position] == UInt8(ascii: "]") { return result }
      guard bytes[position] == UInt8(ascii: ",") else {
        throw Failure(offset: position, reason: "expected ',' or ']' in a list")
      }
      position = skipWhitespace(position + 1)
    }
    throw Failure(offset: range.lowerBound, reason: "unclosed list")
  }

  /// The keys and value ranges of the object spanning `range`, in file order.
  func members(of range: Range<Int>) throws(Failure) -> [(key: String, value: Range<Int>)] {
    guard bytes[range.lowerBound] == UInt8(ascii: "{") else {
      throw Failure(offset: range.lowerBound, reason: "expected an object")
    }
    var result: [(key: String, value: Range<Int>)] = []
    var position = skipWhitespace(range.lowerBound + 1)
    if position < range.upperBound, bytes[position] == UInt8(ascii: "}") { return [] }
    while position < range.upperBound {
      guard bytes[position] == UInt8(ascii: "\"") else {
        throw Failure(offset: position, reason: "expected a quoted key in an object")
      }
      let keyEnd = try stringEnd(position)
      guard
        let key = (try? JSONValue.parse(Data(UnsafeBufferPointer(rebasing: bytes[position..<keyEnd]))))?
          .stringValue
      else {
        throw Failure(offset: position, reason: "a key is not a valid string")
      }
      position = skipWhitespace(keyEnd)
      guard position < range.upperBound, bytes[position] == UInt8(ascii: ":") else {
        throw Failure(offset: position, reason: "expected ':' after a key")
      }
      position = skipWhitespace(position + 1)
      let end = try valueEnd(position)
      result.append((key, position..<end))
      position = skipWhitespace(end)
      guard position < range.upperBound else { break }
      if bytes[position] == UInt8(ascii: "}") { return result }
      guard bytes[position] == UInt8(ascii: ",") else {
        throw Failure(offset: position, reason: "expected ',' or '}' in an object")
      }
      position = skipWhitespace(position + 1)
    }
    throw Failure(offset: range.lowerBound, reason: "unclosed object")
  }

  /// The value spanning `range`, parsed.
  func value(_ range: Range<Int>) throws(Failure) -> JSONValue {
    do {
      return try JSONValue.parse(Data(UnsafeBufferPointer(rebasing: bytes[range])))
    } catch {
      throw Failure(
        offset: range.lowerBound + (error.tooDeepAt ?? 0),
        reason: ConversationFile.jsonReason(error, in: "record"))
    }
  }
}
