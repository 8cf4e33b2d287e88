import EngramCore

/// A deterministic, dependency-free embedder: signed feature hashing of word unigrams,
/// character 3- and 4-grams of each word, and CJK character unigrams and bigrams.
///
/// Useful when no model is installed, in tests, and as a lexical signal. Vectors depend only on
/// the text and `dimension` (FNV-1a 64-bit hashing with a fixed finalizer, no random seeds), so they are stable
/// across runs, machines and versions of this type with the same `modelID`.
public struct HashingEmbedder: Embedder {
  /// `hashing-v1-<dimension>`.
  public var modelID: String { "hashing-v1-\(dimension)" }
  /// Vector length (default 384, the same as MiniLM so indexes can be swapped).
  public let dimension: Int
  /// Unbounded: every character is read.
  public var maxSequenceLength: Int { Int.max }

  /// Weight of a whole word or CJK character; n-grams carry the rest of the signal.
  static let wordWeight: Float = 1
  /// Weight of a character n-gram or CJK bigram.
  static let gramWeight: Float = 0.5

  /// An embedder of `dimension` components.
  /// - Throws: `EmbeddingError.invalidDimension` unless 8 ≤ dimension ≤ 65 536.
  public init(dimension: Int = 384) throws(EmbeddingError) {
    guard (8...65_536).contains(dimension) else { throw .invalidDimension(dimension) }
    self.dimension = dimension
  }

  /// Embeds every text.
  /// - Throws: `EmbeddingError.emptyInput(index:)` for an empty or whitespace-only text.
  public func embed(_ texts: [String]) async throws -> [[Float]] {
    try embedSynchronously(texts)
  }

  /// Embeds every text on the calling thread.
  /// - Throws: `EmbeddingError.emptyInput(index:)` for an empty or whitespace-only text.
  /// - Complexity: O(n) in the total number of characters.
  public func embedSynchronously(_ texts: [String]) throws(EmbeddingError) -> [[Float]] {
    var vectors: [[Float]] = []
    vectors.reserveCapacity(texts.count)
    for (index, text) in texts.enumerated() {
      vectors.append(try vector(text, index: index))
    }
    return vectors
  }

  private func vector(_ text: String, index: Int) throws(EmbeddingError) -> [Float] {
    var vector = [Float](repeating: 0, count: dimension)
    var features = 0
    func add(_ kind: UInt8, _ scalars: ArraySlice<Unicode.Scalar>, _ weight: Float) {
      let hash = Self.fnv1a(kind, scalars)
      let slot = Int(hash % UInt64(dimension))
      vector[slot] += (hash >> 63) == 0 ? weight : -weight
      features += 1
    }
    var word: [Unicode.Scalar] = []
    var previousCJK: Unicode.Scalar?
    func flushWord() {
      guard !word.isEmpty else { return }
      add(0x57, word[...], Self.wordWeight)
      // Character n-grams of "<word>" tolerate inflection and typos.
      let padded = ["<"] + word + [">"]
      for size in 3...4 where padded.count >= size {
        for start in 0...(padded.count - size) {
          add(0x47, padded[start..<(start + size)], Self.gramWeight)
        }
      }
      word.removeAll(keepingCapacity: true)
    }
    for scalar in text.lowercased().unicodeScalars {
      if Self.isCJK(scalar) {
        flushWord()
        add(0x43, [scalar][...], Self.wordWeight)
        if let previousCJK { add(0x42, [previousCJK, scalar][...], Self.gramWeight) }
        previousCJK = scalar
      } else if scalar.properties.isAlphabetic || scalar.properties.numericType != nil {
        previousCJK = nil
        word.append(scalar)
      } else {
        previousCJK = nil
        flushWord()
        // Text with no letters at all ("?!", "🙂") still embeds, by its symbols.
        if !scalar.properties.isWhitespace, scalar.properties.generalCategory != .control {
          add(0x53, [scalar][...], Self.gramWeight)
        }
      }
    }
    flushWord()
    guard features > 0 else { throw .emptyInput(index: index) }
    var squares: Float = 0
    for value in vector { squares += value * value }
    // Features can cancel exactly only in pathological cases; keep a defined unit vector then.
    guard squares > 0 else {
      vector[Int(Self.fnv1a(0x5A, ArraySlice(text.unicodeScalars)) % UInt64(dimension))] = 1
      return vector
    }
    let inverse = 1 / squares.squareRoot()
    for slot in vector.indices { vector[slot] *= inverse }
    return vector
  }

  /// FNV-1a 64 over a kind byte and the UTF-8 bytes of `scalars`, then an fmix64 finalizer.
  static func fnv1a(_ kind: UInt8, _ scalars: ArraySlice<Unicode.Scalar>) -> UInt64 {
    var fnv = FNV1a()
    fnv.add(kind)
    for scalar in scalars { fnv.add(UTF8.encode(scalar)!) }
    var hash = fnv.value
    // FNV-1a's low bits are weakly mixed (bit 0 is the parity of the bytes' bit 0), and the slot
    // is taken from them: finish with MurmurHash3's fmix64 avalanche.
    hash ^= hash >> 33
    hash &*= 0xFF51_AFD7_ED55_8CCD
    hash ^= hash >> 33
    hash &*= 0xC4CE_B9FE_1A85_EC53
    hash ^= hash >> 33
    return hash
  }

  /// Han ideographs, kana and Hangul: scripts written without spaces between words.
  static func isCJK(_ scalar: Unicode.Scalar) -> Bool {
    let value = scalar.value
    return WordPieceTokenizer.isCJK(value) || (0x3040...0x30FF).contains(value)
      || (0xAC00...0xD7AF).contains(value) || (0x1100...0x11FF).contains(value)
  }
}
