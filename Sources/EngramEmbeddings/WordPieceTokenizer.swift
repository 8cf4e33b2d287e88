import Foundation

/// BERT's tokenizer (basic tokenization + greedy WordPiece), reproducing Hugging Face
/// `BertTokenizer` token for token.
///
/// Steps: drop U+0000, U+FFFD and control characters (category C*, except tab/CR/LF, which
/// become spaces along with category Zs); put spaces around CJK ideographs; split on
/// whitespace; when uncased, lower-case, decompose (NFD) and drop nonspacing marks; split off
/// every punctuation character; then split each word into the longest vocabulary pieces,
/// continuations prefixed `##`. A word with no split, or longer than 100 scalars, is `[UNK]`.
public struct WordPieceTokenizer: Sendable {
  /// Ids of the special tokens.
  public let unknownID: Int32
  /// The `[CLS]` id that starts every sequence.
  public let classID: Int32
  /// The `[SEP]` id that ends every sequence.
  public let separatorID: Int32
  /// The `[PAD]` id.
  public let paddingID: Int32
  /// Whether text is lower-cased and stripped of accents.
  public let lowercases: Bool
  /// Longest sequence `encode` returns, special tokens included.
  public let maxSequenceLength: Int
  /// Words longer than this many scalars become `[UNK]`.
  public let maxCharactersPerWord = 100

  private let wordIDs: [String: Int32]
  private let continuationIDs: [String: Int32]
  private let tokens: [String]

  /// A tokenizer over `vocabulary` (token at line `i` has id `i`).
  /// - Throws: `EmbeddingError.invalidVocabulary` when a special token is missing.
  public init(
    vocabulary: [String], lowercases: Bool = true, maxSequenceLength: Int = 256, source: String = "vocab.txt"
  ) throws(EmbeddingError) {
    guard maxSequenceLength >= 2 else {
      throw .invalidOption(name: "maxSequenceLength", value: String(maxSequenceLength))
    }
    var words: [String: Int32] = [:]
    var continuations: [String: Int32] = [:]
    words.reserveCapacity(vocabulary.count)
    for (index, token) in vocabulary.enumerated() {
      if token.utf8.count > 2 && token.hasPrefix("##") {
        let piece = String(token.dropFirst(2))
        if continuations[piece] == nil { continuations[piece] = Int32(index) }
      } else {
        words[token] = words[token] ?? Int32(index)
      }
    }
    func special(_ name: String) throws(EmbeddingError) -> Int32 {
      guard let id = words[name] else { throw .invalidVocabulary(path: source, reason: "no \(name) token") }
      return id
    }
    unknownID = try special("[UNK]")
    classID = try special("[CLS]")
    separatorID = try special("[SEP]")
    paddingID = try special("[PAD]")
    wordIDs = words
    continuationIDs = continuations
    tokens = vocabulary
    self.lowercases = lowercases
    self.maxSequenceLength = maxSequenceLength
  }

  /// A tokenizer reading `vocab.txt` (one token per line).
  /// - Throws: `EmbeddingError.modelNotFound` / `.invalidVocabulary`.
  public init(vocabularyFile: URL, lowercases: Bool = true, maxSequenceLength: Int = 256)
    throws(EmbeddingError)
  {
    let data: Data
    do {
      data = try Data(contentsOf: vocabularyFile)
    } catch {
      throw .modelNotFound(
        directory: vocabularyFile.deletingLastPathComponent().path,
        missingFile: vocabularyFile.lastPathComponent)
    }
    guard var text = String(data: data, encoding: .utf8) else {
      throw .invalidVocabulary(path: vocabularyFile.path, reason: "not UTF-8")
    }
    // Lines split on bytes, not Characters: a Character split is most of a MiniLM query's
    // start-up (30,522 lines), and it never splits "\r\n", which is one Character.
    var lines: [String] = []
    lines.reserveCapacity(data.count / 7)
    text.withUTF8 { bytes in
      var start = 0
      func take(_ end: Int) {
        let stop = end > start && bytes[end - 1] == 0x0D ? end - 1 : end
        lines.append(String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<stop]), as: UTF8.self))
      }
      for index in 0..<bytes.count where bytes[index] == 0x0A {
        take(index)
        start = index + 1
      }
      if start < bytes.count { take(bytes.count) }
    }
    guard !lines.isEmpty else { throw .invalidVocabulary(path: vocabularyFile.path, reason: "empty") }
    try self.init(
      vocabulary: lines, lowercases: lowercases, maxSequenceLength: maxSequenceLength,
      source: vocabularyFile.path)
  }

  /// Number of tokens in the vocabulary.
  public var vocabularySize: Int { tokens.count }

  /// The token string of `id`, or nil when out of range.
  public func token(for id: Int32) -> String? {
    id >= 0 && Int(id) < tokens.count ? tokens[Int(id)] : nil
  }

  /// Model input ids: `[CLS]`, the word pieces truncated to `maxSequenceLength - 2`, `[SEP]`.
  /// - Complexity: O(n · w) for n scalars and longest word w (w ≤ 100).
  public func encode(_ text: String) -> [Int32] {
    var ids: [Int32] = [classID]
    appendPieceIDs(of: text, to: &ids, limit: maxSequenceLength - 2)
    ids.append(separatorID)
    return ids
  }

  /// The word-piece ids of `text` without special tokens or truncation.
  public func pieceIDs(_ text: String) -> [Int32] {
    var ids: [Int32] = []
    appendPieceIDs(of: text, to: &ids, limit: Int.max)
    return ids
  }

  /// The word-piece strings of `text` (continuations with `##`), without special tokens.
  public func tokenize(_ text: String) -> [String] {
    pieceIDs(text).map { tokens[Int($0)] }
  }

  /// The words of basic tokenization (before WordPiece).
  public func basicTokens(_ text: String) -> [String] {
    var words: [String] = []
    forEachBasicToken(text) { scalars in
      var word = String.UnicodeScalarView()
      word.append(contentsOf: scalars)
      words.append(String(word))
      return true
    }
    return words
  }

  private func appendPieceIDs(of text: String, to ids: inout [Int32], limit: Int) {
    let start = ids.count
    forEachBasicToken(text) { word in
      wordPiece(word, into: &ids)
      return ids.count - start < limit
    }
    if ids.count - start > limit { ids.removeLast(ids.count - start - limit) }
  }

  /// Greedy longest-match-first split of one word.
  private func wordPiece(_ word: [Unicode.Scalar], into ids: inout [Int32]) {
    guard word.count <= maxCharactersPerWord else {
      ids.append(unknownID)
      return
    }
    let mark = ids.count
    var start = 0
    while start < word.count {
      var end = word.count
      var found: Int32?
      while end > start {
        var view = String.UnicodeScalarView()
        view.append(contentsOf: word[start..<end])
        let piece = String(view)
        if let id = start == 0 ? wordIDs[piece] : continuationIDs[piece] {
          found = id
          break
        }
        end -= 1
      }
      guard let id = found else {
        ids.removeLast(ids.count - mark)
        ids.append(unknownID)
        return
      }
      ids.append(id)
      start = end
    }
  }

  /// Calls `body` with each word of basic tokenization until it returns false.
  private func forEachBasicToken(_ text: String, _ body: ([Unicode.Scalar]) -> Bool) {
    // Clean, space out CJK, split on whitespace.
    var current: [Unicode.Scalar] = []
    var keepGoing = true
    func flushWord() {
      guard !current.isEmpty, keepGoing else {
        current.removeAll(keepingCapacity: true)
        return
      }
      keepGoing = splitWord(current, body)
      current.removeAll(keepingCapacity: true)
    }
    for scalar in text.unicodeScalars {
      guard keepGoing else { return }
      let value = scalar.value
      if value == 0 || value == 0xFFFD || Self.isControl(scalar) { continue }
      if Self.isWhitespace(scalar) {
        flushWord()
      } else if Self.isCJK(value) {
        flushWord()
        current.append(scalar)
        flushWord()
      } else {
        current.append(scalar)
      }
    }
    flushWord()
  }

  /// Normalizes one whitespace-delimited word and splits off punctuation.
  private func splitWord(_ word: [Unicode.Scalar], _ body: ([Unicode.Scalar]) -> Bool) -> Bool {
    let normalized = lowercases ? Self.lowercaseAndStripAccents(word) : word
    var piece: [Unicode.Scalar] = []
    for scalar in normalized {
      if Self.isPunctuation(scalar) {
        if !piece.isEmpty {
          guard body(piece) else { return false }
          piece.removeAll(keepingCapacity: true)
        }
        guard body([scalar]) else { return false }
      } else {
        piece.append(scalar)
      }
    }
    if !piece.isEmpty { return body(piece) }
    return true
  }

  static func lowercaseAndStripAccents(_ word: [Unicode.Scalar]) -> [Unicode.Scalar] {
    if word.allSatisfy({ $0.isASCII }) {
      return word.map { scalar in
        (0x41...0x5A).contains(scalar.value) ? Unicode.Scalar(scalar.value + 32)! : scalar
      }
    }
    var view = String.UnicodeScalarView()
    view.append(contentsOf: word)
    let lowered = String(view).lowercased()
    return lowered.decomposedStringWithCanonicalMapping.unicodeScalars.filter {
      $0.properties.generalCategory != .nonspacingMark
    }
  }

  static func isWhitespace(_ scalar: Unicode.Scalar) -> Bool {
    switch scalar.value {
    case 0x20, 0x09, 0x0A, 0x0D: return true
    default: return scalar.properties.generalCategory == .spaceSeparator
    }
  }

  static func isControl(_ scalar: Unicode.Scalar) -> Bool {
    switch scalar.value {
    case 0x09, 0x0A, 0x0D: return false
    case 0x20...0x7E: return false
    default:
      switch scalar.properties.generalCategory {
      case .control, .format, .surrogate, .privateUse, .unassigned: return true
      default: return false
      }
    }
  }

  static func isPunctuation(_ scalar: Unicode.Scalar) -> Bool {
    let value = scalar.value
    if (33...47).contains(value) || (58...64).contains(value) || (91...96).contains(value)
      || (123...126).contains(value)
    {
      return true
    }
    if value < 128 { return false }
    switch scalar.properties.generalCategory {
    case .connectorPunctuation, .dashPunctuation, .openPunctuation, .closePunctuation,
      .initialPunctuation, .finalPunctuation, .otherPunctuation:
      return true
    default: return false
    }
  }

  static func isCJK(_ value: UInt32) -> Bool {
    (0x4E00...0x9FFF).contains(value) || (0x3400...0x4DBF).contains(value)
      || (0x20000...0x2A6DF).contains(value) || (0x2A700...0x2B73F).contains(value)
      || (0x2B740...0x2B81F).contains(value) || (0x2B820...0x2CEAF).contains(value)
      || (0xF900...0xFAFF).contains(value) || (0x2F800...0x2FA1F).contains(value)
  }
}
