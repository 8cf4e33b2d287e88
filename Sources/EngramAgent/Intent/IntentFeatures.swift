import EngramCore

/// Sparse binary features of a request for the intent model: words, word pairs, character
/// trigrams of words (robust to typos), and character unigrams, bigrams and trigrams of
/// CJK runs (Chinese needs no tokenizer vocabulary), plus a few shape cues (a question
/// mark, a number next to an operator). Each feature is hashed into `dimension` buckets.
enum IntentFeatures {
  /// How many hash buckets features fall into.
  static let dimension = 1 << 18

  /// The distinct hashed features of `text`, in no particular order.
  /// - Complexity: O(n) in the length of `text`.
  static func extract(_ text: String) -> [Int32] {
    var features = Set<Int32>()
    func add(_ parts: String...) { features.insert(hash(parts)) }

    let tokens = Tokenizer.intent.tokens(text)
    var words: [String] = []
    for token in tokens {
      switch token {
      case .word(let word):
        words.append(word)
        add("w", word)
        if word.count >= 3 {
          let framed = Array("<" + word + ">")
          for start in 0...(framed.count - 3) { add("c", String(framed[start..<start + 3])) }
        }
      case .cjk(let run):
        words.append("|")
        let characters = Array(run)
        for position in characters.indices {
          add("z1", String(characters[position]))
          if position + 1 < characters.count { add("z2", String(characters[position...position + 1])) }
          if position + 2 < characters.count { add("z3", String(characters[position...position + 2])) }
        }
      case .symbol(let symbol):
        words.append("|")
        add("p", String(symbol))
      }
    }
    for index in words.indices.dropLast() where words[index] != "|" && words[index + 1] != "|" {
      add("b", words[index], words[index + 1])
    }
    if let first = tokens.first { add("first", first.key) }
    if tokens.count >= 2 { add("first2", tokens[0].key, tokens[1].key) }
    if let last = tokens.last { add("last", last.key) }
    // How a Chinese sentence ends (吗, 呢, 了, 吧) marks questions and requests.
    if case .cjk(let run)? = tokens.last(where: { if case .symbol = $0 { false } else { true } }) {
      add("end1", String(run.suffix(1)))
      add("end2", String(run.suffix(2)))
    }
    if tokens.count <= 2 { add("short") }
    // Sorted: a Set's order differs between instances, and the order of the sums in
    // training and prediction must not (the model is deterministic to the last bit).
    return features.sorted()
  }

  /// The word features of `text` (one per distinct word, and per distinct Chinese
  /// character), for telling how much of a request the model knows.
  static func wordFeatures(_ text: String) -> [Int32] {
    var features = Set<Int32>()
    for token in Tokenizer.intent.tokens(text) {
      switch token {
      case .word(let word): features.insert(hash(["w", word]))
      case .cjk(let run): for character in run { features.insert(hash(["z1", String(character)])) }
      case .symbol: break
      }
    }
    return features.sorted()
  }

  /// FNV-1a over the parts' UTF-8 bytes with a separator, reduced to `dimension`.
  static func hash(_ parts: [String]) -> Int32 {
    var hash = FNV1a()
    for part in parts {
      hash.add(part.utf8)
      hash.add(0x1f)
    }
    return Int32(truncatingIfNeeded: hash.value % UInt64(dimension))
  }
}

extension Tokenizer.Token {
  /// The token as the intent model's position features read it: a word, a CJK run's first
  /// two characters, or a symbol, each with its kind's prefix.
  var key: String {
    switch self {
    case .word(let word): return "w" + word
    case .cjk(let run): return "z" + String(run.prefix(2))
    case .symbol(let symbol): return "p" + String(symbol)
    }
  }
}
