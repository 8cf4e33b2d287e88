import Foundation

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// Reads one JSON document from a file front to back in blocks, handing out the values it
/// is asked for one at a time: an export's outer structure (the list of conversations, a
/// Telegram export's list of chats) is walked here, and only the value being read (one
/// conversation) is held in memory, whatever the file's size.
///
/// What is skipped (`skipValue`) is checked only for its boundaries (brackets, strings); a
/// value read (`readValue`) is parsed by `JSONScanner`, which checks the rest. Errors are
/// `ImportError.malformed` with the file's line.
final class JSONStream {
  /// Bytes that end a number or literal.
  static let delimiters: Set<UInt8> = [0x2C, 0x5D, 0x7D, 0x20, 0x0A, 0x0D, 0x09]
  /// Bytes read per block, by default.
  static let defaultBlockBytes = 1 << 20
  /// One value (a conversation) larger than this is refused.
  static let maximumValueBytes = 1 << 30

  let path: String
  /// Bytes read per block.
  let blockBytes: Int
  private let descriptor: Int32
  private var buffer: [UInt8] = []
  /// The next byte to read in `buffer`.
  private var position = 0
  private var atEnd = false
  /// Newlines are counted up to `counted.offset` of `buffer`, where line `counted.line`
  /// runs: each byte is counted once, however often the line is asked for.
  private var counted = (offset: 0, line: 1)
  /// Whether the first bytes (a byte-order mark) were looked at.
  private var started = false
  /// The document's outermost list or object, once entered: what a truncated file ends in.
  private var outermost: (kind: String, line: Int)?

  /// Opens `path`, a regular file.
  /// - Throws: `ImportError.unreadable`.
  init(path: String, blockBytes: Int = JSONStream.defaultBlockBytes) throws(ImportError) {
    self.path = path
    self.blockBytes = blockBytes
    descriptor = open(path, O_RDONLY | O_CLOEXEC)
    guard descriptor >= 0 else { throw .unreadable(path: path, reason: InputFile.reason(errno)) }
    buffer.reserveCapacity(blockBytes * 2)
  }

  deinit { close(descriptor) }

  /// The line of the next byte.
  var line: Int { lineAt(position) }

  /// The line of `buffer[offset]` (at or after the last offset counted to).
  private func lineAt(_ offset: Int) -> Int {
    if offset > counted.offset {
      let newlines = buffer.withUnsafeBufferPointer { bytes in
        var count = 0
        for index in counted.offset..<offset where bytes[index] == 0x0A { count += 1 }
        return count
      }
      counted = (offset, counted.line + newlines)
    }
    return counted.line
  }

  /// Drops `buffer[0..<end]`, keeping the line count.
  private func drop(upTo end: Int) {
    _ = lineAt(end)
    buffer.removeSubrange(0..<end)
    counted.offset = 0
  }

  func failure(_ reason: String, line: Int? = nil) -> ImportError {
    .malformed(path: path, line: line ?? self.line, reason: reason)
  }

  /// The file ended early (as `JSONScanner` says it: the outermost value left open, or a
  /// string), on its last line.
  private func endedEarly(inString: Bool = false) -> ImportError {
    let last = lineAt(buffer.count)
    if inString { return failure("the file ends inside a string", line: last) }
    guard let outermost else { return failure("unexpected end of the file", line: last) }
    return failure(
      "the file ends inside the \(outermost.kind) that starts on line \(outermost.line)", line: last)
  }

  /// Drops the bytes before `position` (keeping the line count), then reads one more block.
  /// Returns false at the end of the file.
  private func readBlock() throws(ImportError) -> Bool {
    guard !atEnd else { return false }
    if position > 0 {
      drop(upTo: position)
      position = 0
    }
    let previous = buffer.count
    buffer.append(contentsOf: repeatElement(0, count: blockBytes))
    var got = -1
    while got < 0 {
      got = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress! + previous, blockBytes) }
      if got < 0 && errno != EINTR { throw .unreadable(path: path, reason: InputFile.reason(errno)) }
    }
    buffer.removeSubrange((previous + got)...)
    if got == 0 { atEnd = true }
    return got > 0
  }

  /// The byte at `position + offset`, reading more as needed; nil at the end of the file.
  private func byte(at offset: Int = 0) throws(ImportError) -> UInt8? {
    while position + offset >= buffer.count {
      guard try readBlock() else { return nil }
    }
    return buffer[position + offset]
  }

  /// Skips whitespace (and a byte-order mark at the very start); returns the next byte, or
  /// nil at the end of the file.
  @discardableResult
  func skipWhitespace() throws(ImportError) -> UInt8? {
    if !started {
      started = true
      if try byte() == 0xEF, try byte(at: 1) == 0xBB, try byte(at: 2) == 0xBF { position += 3 }
    }
    while let next = try byte() {
      switch next {
      case 0x20, 0x0A, 0x0D, 0x09: position += 1
      default: return next
      }
    }
    return nil
  }

  /// Consumes `expected` after whitespace.
  func expect(_ expected: UInt8, _ what: String) throws(ImportError) {
    let found = try skipWhitespace()
    guard found == expected else {
      if found == nil { throw endedEarly() }
      throw failure("\(what) expected")
    }
    if outermost == nil, expected == UInt8(ascii: "[") || expected == UInt8(ascii: "{") {
      outermost = (expected == UInt8(ascii: "[") ? "list" : "object", line)
    }
    position += 1
  }

  /// Consumes `,` and returns true, or consumes `closing` and returns false.
  func separator(closing: UInt8) throws(ImportError) -> Bool {
    switch try skipWhitespace() {
    case UInt8(ascii: ","):
      position += 1
      return true
    case closing?:
      position += 1
      return false
    case nil: throw endedEarly()
    default:
      throw failure(
        closing == UInt8(ascii: "]") ? "expected ',' or ']' in a list" : "expected ',' or '}' in an object")
    }
  }

  /// The end (exclusive, relative to `position`) of the value starting at `position`,
  /// reading blocks as needed; with `keep` false the bytes scanned are dropped as it goes
  /// (the value is skipped, not kept).
  private func valueLength(keep: Bool) throws(ImportError) -> Int {
    guard let first = try byte() else { throw failure("unexpected end of the file (a value expected)") }
    var offset = 0
    if first != UInt8(ascii: "\""), first != UInt8(ascii: "{"), first != UInt8(ascii: "[") {
      // A number, true, false or null: up to its delimiter (the parser checks its text).
      while let next = try byte(at: offset), !Self.delimiters.contains(next) { offset += 1 }
      guard offset > 0 else { throw failure("a value expected") }
      return offset
    }
    var depth = 0
    var inString = false
    var escaped = false
    while true {
      guard let next = try byte(at: offset) else { throw endedEarly(inString: inString) }
      offset += 1
      if inString {
        if escaped {
          escaped = false
        } else if next == UInt8(ascii: "\\") {
          escaped = true
        } else if next == UInt8(ascii: "\"") {
          inString = false
          if depth == 0 { return offset }
        }
      } else {
        switch next {
        case UInt8(ascii: "\""): inString = true
        case UInt8(ascii: "{"), UInt8(ascii: "["): depth += 1
        case UInt8(ascii: "}"), UInt8(ascii: "]"):
          depth -= 1
          if depth < 0 { throw failure("unexpected '\(Character(Unicode.Scalar(next)))'") }
          if depth == 0 { return offset }
        default: break
        }
      }
      if !keep, offset >= blockBytes {
        // Skipped bytes are not kept: the scan goes on after them.
        drop(upTo: position + offset)
        position = 0
        offset = 0
      } else if keep, offset > Self.maximumValueBytes {
        throw failure("a value larger than \(Self.maximumValueBytes >> 20) MiB")
      }
    }
  }

  /// Skips the next value after whitespace.
  func skipValue() throws(ImportError) {
    try skipWhitespace()
    position += try valueLength(keep: false)
  }

  /// The bytes of the next value after whitespace, with the line it starts on.
  func readRawValue() throws(ImportError) -> (bytes: [UInt8], line: Int) {
    try skipWhitespace()
    let startLine = line
    let length = try valueLength(keep: true)
    let bytes = Array(buffer[position..<(position + length)])
    position += length
    return (bytes, startLine)
  }

  /// Reads and parses the next value after whitespace; returns it with the line it starts on.
  func readValue() throws(ImportError) -> (value: JSONValue, line: Int) {
    let (bytes, startLine) = try readRawValue()
    return try bytes.withUnsafeBufferPointer { bytes throws(ImportError) in
      var scanner = JSONScanner(bytes)
      do throws(JSONScanner.Failure) {
        return (try scanner.value(0..<bytes.count), startLine)
      } catch {
        throw failure(error.reason, line: startLine + scanner.line(at: error.offset) - 1)
      }
    }
  }

  /// Reads the next string (an object's key) after whitespace.
  func readKey() throws(ImportError) -> String {
    guard try skipWhitespace() == UInt8(ascii: "\"") else { throw failure("a member name expected") }
    guard case .string(let key) = try readValue().value else { throw failure("a member name expected") }
    return key
  }

  /// Checks that nothing but whitespace follows.
  func expectEnd() throws(ImportError) {
    guard try skipWhitespace() == nil else { throw failure("unexpected text after the JSON value") }
  }
}
