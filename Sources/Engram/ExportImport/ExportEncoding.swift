import EngramStore
import Foundation

/// The 64-bit FNV-1a hash of an export's bytes, carried by its `end` line so an import can
/// tell a complete, unchanged file from a truncated or altered one.
struct ExportChecksum {
  private(set) var value: UInt64 = 0xcbf2_9ce4_8422_2325

  mutating func update(_ bytes: UnsafeRawBufferPointer) {
    var hash = value
    for byte in bytes {
      hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3
    }
    value = hash
  }

  mutating func update(_ bytes: UnsafeBufferPointer<UInt8>) {
    update(UnsafeRawBufferPointer(bytes))
  }

  /// As written in the `end` line: `fnv1a64:` and 16 hex digits.
  var text: String {
    let hex = String(value, radix: 16)
    return "fnv1a64:" + String(repeating: "0", count: 16 - hex.count) + hex
  }
}

/// Builds export lines as UTF-8 bytes, without an intermediate `JSONValue` per row.
///
/// Text columns are written as JSON strings from their stored bytes; bytes that are not
/// valid UTF-8 (another tool's writes) are repaired with U+FFFD, so every line is valid
/// UTF-8 and any run of whole lines decodes on its own.
struct ExportEncoder {
  var bytes: [UInt8] = []

  init(capacity: Int) {
    bytes.reserveCapacity(capacity)
  }

  mutating func append(_ text: StaticString) {
    text.withUTF8Buffer { bytes.append(contentsOf: $0) }
  }

  mutating func append(raw text: String) {
    bytes.append(contentsOf: text.utf8)
  }

  mutating func appendInteger(_ value: Int64) {
    bytes.append(contentsOf: String(value).utf8)
  }

  /// A double; NaN and infinity (which JSON cannot hold) are written as `null`.
  mutating func appendDouble(_ value: Double) {
    if value.isFinite {
      bytes.append(contentsOf: value.description.utf8)
    } else {
      append("null")
    }
  }

  /// A JSON string of `text`.
  mutating func appendString(_ text: String) {
    var text = text
    text.withUTF8 { appendString(utf8: $0) }
  }

  /// A JSON string of UTF-8 bytes, repairing invalid sequences.
  mutating func appendString(utf8 source: UnsafeBufferPointer<UInt8>) {
    if source.contains(where: { $0 >= 0x80 }), String(validating: source, as: UTF8.self) == nil {
      appendString(String(decoding: source, as: UTF8.self))
      return
    }
    bytes.append(0x22)
    var runStart = 0
    for index in 0..<source.count {
      let byte = source[index]
      guard byte < 0x20 || byte == 0x22 || byte == 0x5C else { continue }
      if runStart < index {
        bytes.append(contentsOf: UnsafeBufferPointer(rebasing: source[runStart..<index]))
      }
      runStart = index + 1
      bytes.append(0x5C)
      switch byte {
      case 0x22: bytes.append(0x22)
      case 0x5C: bytes.append(0x5C)
      case 0x0A: bytes.append(0x6E)
      case 0x0D: bytes.append(0x72)
      case 0x09: bytes.append(0x74)
      default:
        bytes.append(contentsOf: [
          0x75, 0x30, 0x30, Self.hexDigits[Int(byte >> 4)], Self.hexDigits[Int(byte & 15)],
        ])
      }
    }
    if runStart < source.count {
      bytes.append(contentsOf: UnsafeBufferPointer(rebasing: source[runStart..<source.count]))
    }
    bytes.append(0x22)
  }

  /// A blob as `{"base64":"..."}`.
  mutating func appendBlob(_ source: UnsafeRawBufferPointer) {
    append(#"{"base64":""#)
    let table = Self.base64Digits
    var index = 0
    let count = source.count
    while index + 3 <= count {
      let chunk = UInt32(source[index]) << 16 | UInt32(source[index + 1]) << 8 | UInt32(source[index + 2])
      bytes.append(table[Int(chunk >> 18)])
      bytes.append(table[Int(chunk >> 12 & 63)])
      bytes.append(table[Int(chunk >> 6 & 63)])
      bytes.append(table[Int(chunk & 63)])
      index += 3
    }
    if count - index == 1 {
      let chunk = UInt32(source[index]) << 16
      bytes.append(contentsOf: [table[Int(chunk >> 18)], table[Int(chunk >> 12 & 63)], 0x3D, 0x3D])
    } else if count - index == 2 {
      let chunk = UInt32(source[index]) << 16 | UInt32(source[index + 1]) << 8
      bytes.append(contentsOf: [
        table[Int(chunk >> 18)], table[Int(chunk >> 12 & 63)], table[Int(chunk >> 6 & 63)], 0x3D,
      ])
    }
    append(#""}"#)
  }

  /// Column `index` of the statement's current row as a JSON value.
  mutating func appendColumn(_ row: any ExportedRow, _ index: Int) {
    switch row.columnType(at: index) {
    case .integer: appendInteger(row.int64(at: index))
    case .real: appendDouble(row.double(at: index))
    case .text: row.withUTF8Bytes(at: index) { appendString(utf8: $0) }
    case .blob: row.withBlob(at: index) { appendBlob($0) }
    case .null: append("null")
    }
  }

  static let hexDigits: [UInt8] = Array("0123456789abcdef".utf8)
  static let base64Digits: [UInt8] = Array(
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)
}

/// Reads a file (or standard input) line by line in 1 MiB blocks, so memory stays bounded
/// by the longest line, whatever the file's size. Owns its descriptor.
final class ExportLineReader {
  /// Lines longer than this are refused (an export line is one row).
  static let maximumLineLength = 256 << 20

  private let descriptor: Int32
  private let ownsDescriptor: Bool
  private var buffer: [UInt8] = []
  private var start = 0
  /// Where the search for the next newline resumes: the bytes of an unfinished line before it
  /// hold none (so a long line is scanned once, not once per block read).
  private var scanned = 0
  private var atEnd = false
  /// The 1-based number of the last line returned.
  private(set) var lineNumber = 0

  /// Opens `path` (`-` is standard input).
  /// - Throws: `ImportError.unreadable`.
  init(path: String) throws {
    if path == "-" {
      descriptor = 0
      ownsDescriptor = false
    } else {
      try InputFile.refuseFolder(path)
      descriptor = open(path, O_RDONLY | O_CLOEXEC)
      guard descriptor >= 0 else {
        throw ImportError.unreadable(path: path, reason: InputFile.reason(errno))
      }
      ownsDescriptor = true
    }
    buffer.reserveCapacity(2 << 20)
  }

  deinit {
    if ownsDescriptor { close(descriptor) }
  }

  /// Calls `body` with the next line's bytes including its newline (absent on a last line
  /// without one), or returns false at the end of the file.
  /// - Throws: `ImportError.unreadable` on a read error, `EngramError.malformedExport` for
  ///   an over-long line, or what `body` throws.
  func nextLine(path: String, _ body: (UnsafeBufferPointer<UInt8>) throws -> Void) throws -> Bool {
    while true {
      let newline = buffer.withUnsafeBufferPointer { all -> Int? in
        let from = max(start, scanned)
        guard from < all.count, let base = all.baseAddress else { return nil }
        guard let found = memchr(base + from, 0x0A, all.count - from) else { return nil }
        return base.distance(to: found.assumingMemoryBound(to: UInt8.self))
      }
      if let newline {
        lineNumber += 1
        try buffer.withUnsafeBufferPointer { try body(UnsafeBufferPointer(rebasing: $0[start...newline])) }
        start = newline + 1
        return true
      }
      // No newline after `start` so far: the next search starts after these bytes.
      scanned = buffer.count
      if atEnd {
        guard start < buffer.count else { return false }
        lineNumber += 1
        try buffer.withUnsafeBufferPointer { try body(UnsafeBufferPointer(rebasing: $0[start...])) }
        start = buffer.count
        return true
      }
      if buffer.count - start > Self.maximumLineLength {
        throw EngramError.malformedExport(
          line: lineNumber + 1, reason: "the line is longer than \(Self.maximumLineLength >> 20) MiB")
      }
      // Keep the unfinished line, then read the next block after it.
      if start > 0 {
        buffer.removeSubrange(0..<start)
        scanned -= start
        start = 0
      }
      let block = 1 << 20
      let previous = buffer.count
      buffer.append(contentsOf: repeatElement(0, count: block))
      var got = -1
      while got < 0 {
        got = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress! + previous, block) }
        if got < 0 && errno != EINTR {
          throw ImportError.unreadable(path: path, reason: String(cString: strerror(errno)))
        }
      }
      buffer.removeSubrange((previous + got)...)
      if got == 0 { atEnd = true }
    }
  }
}
