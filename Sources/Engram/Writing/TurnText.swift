import EngramCore
import Foundation

/// The bound on what one stored turn (or memory) holds, and how a longer turn is stored: as
/// ordered parts, each a turn of its own that search finds, which joined in order give the
/// text back byte for byte.
///
/// Search reads every candidate's whole text (its snippet, the re-ranker's terms, the hit it
/// returns), so one unbounded turn would make every search that finds it as slow as its
/// size; bounded parts keep a search's cost that of the parts it returns.
public enum TurnText {
  /// The most bytes (UTF-8) one stored turn or memory holds: 64 KiB.
  public static let maxBytes = 65_536

  /// The metadata keys of a part: its 1-based position and the number of parts.
  public static let partKey = "part"
  /// See `partKey`.
  public static let partsKey = "parts"

  /// `text` in parts of at most `maxBytes` bytes, in order: one part when it fits. Joined
  /// they are `text` byte for byte. A part ends after the last line break in its last
  /// quarter, else after the last white space there, else between two Unicode scalars
  /// (never inside one).
  /// - Complexity: O(n) in the text's bytes.
  public static func parts(_ text: String, maxBytes: Int = TurnText.maxBytes) -> [String] {
    precondition(maxBytes >= 8, "a part holds at least one scalar")
    guard text.utf8.count > maxBytes else { return [text] }
    var text = text
    return text.withUTF8 { bytes in
      var parts: [String] = []
      var start = 0
      while bytes.count - start > maxBytes {
        var end = start + maxBytes
        // Not inside a scalar: continuation bytes are 10xxxxxx.
        while end > start, bytes[end] & 0xC0 == 0x80 { end -= 1 }
        let floor = start + maxBytes * 3 / 4
        var cut = end
        if let newline = lastIndex(of: [0x0A], in: bytes, from: floor, to: end) {
          cut = newline + 1
        } else if let space = lastIndex(of: [0x20, 0x09], in: bytes, from: floor, to: end) {
          cut = space + 1
        }
        parts.append(String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<cut]), as: UTF8.self))
        start = cut
      }
      parts.append(String(decoding: UnsafeBufferPointer(rebasing: bytes[start...]), as: UTF8.self))
      return parts
    }
  }

  /// The last position in `from..<to` holding one of `values`.
  private static func lastIndex(of values: [UInt8], in bytes: UnsafeBufferPointer<UInt8>, from: Int, to: Int)
    -> Int?
  {
    var index = to - 1
    while index >= from {
      if values.contains(bytes[index]) { return index }
      index -= 1
    }
    return nil
  }

  /// `metadata` of part `number` (1-based) of `count`; unchanged for a turn of one part.
  static func partMetadata(_ metadata: [String: JSONValue], number: Int, of count: Int) -> [String: JSONValue]
  {
    guard count > 1 else { return metadata }
    var metadata = metadata
    metadata[partKey] = .int(number)
    metadata[partsKey] = .int(count)
    return metadata
  }
}

extension ConversationTurn {
  /// The turn as the turns it is stored as: itself when it fits `TurnText.maxBytes`, else its
  /// parts, in order, each with `part` and `parts` in its metadata and a source id of its own
  /// (the first keeps the turn's, so a turn stored before is still recognised).
  func storedParts(maxBytes: Int = TurnText.maxBytes) -> [ConversationTurn] {
    let texts = TurnText.parts(content, maxBytes: maxBytes)
    guard texts.count > 1 else { return [self] }
    return texts.enumerated().map { offset, text in
      var part = self
      part.content = text
      part.metadata = TurnText.partMetadata(metadata, number: offset + 1, of: texts.count)
      if offset > 0, let id = sourceID, !id.isEmpty { part.sourceID = id + "#part\(offset + 1)" }
      return part
    }
  }
}

extension ConversationSession {
  /// The session with each turn as the turns it is stored as (`ConversationTurn.storedParts`).
  func storedParts() -> ConversationSession {
    guard turns.contains(where: { $0.content.utf8.count > TurnText.maxBytes }) else { return self }
    var session = self
    session.turns = turns.flatMap { $0.storedParts() }
    return session
  }
}
