/// The English (Porter2) stemmer of the Snowball project, written here from the published
/// algorithm (snowballstem.org/algorithms/english/stemmer.html), so that the keyword index
/// and the queries reduce "walks", "walking" and "walked" to the one term "walk".
///
/// It works on lowercase ASCII words (`a`-`z` and `'`); anything else is left as it is. The
/// stem is written in place into a reusable buffer, so stemming allocates nothing once the
/// buffer has grown to the longest word seen.
///
/// Changing what this stemmer returns changes the terms of every FTS index: it needs a
/// migration that rebuilds the indexes (as `0004_fts_stemmed_turn_dates.sql` does).
public struct EnglishStemmer {
  /// The word being stemmed (lowercase ASCII; `Y` marks a consonant y while stemming).
  private var word: [UInt8] = []
  /// Start of the R1 region.
  private var r1 = 0
  /// Start of the R2 region.
  private var r2 = 0

  /// Words longer than this are returned unchanged (no English word is; such a token is an
  /// identifier or noise, and the limit bounds the work per token).
  public static let maxLength = 48

  /// Creates a stemmer (keep one and reuse it: its buffer is kept between words).
  public init() { word.reserveCapacity(Self.maxLength) }

  /// The stem of `text` (a lowercase ASCII word); other text comes back unchanged.
  public static func stem(_ text: String) -> String {
    var stemmer = EnglishStemmer()
    let bytes = Array(text.utf8)
    return bytes.withUnsafeBufferPointer { input in
      stemmer.stem(input) { String(decoding: $0, as: UTF8.self) } ?? text
    }
  }

  /// Stems `input` (lowercase ASCII letters and apostrophes; with `lowercasing`, capitals
  /// too, read as lowercase) and passes the stem to `body`; returns nil, without calling
  /// `body`, when `input` is not such a word or is longer than `maxLength`.
  /// - Complexity: O(n) in the word's length.
  public mutating func stem<R>(
    _ input: UnsafeBufferPointer<UInt8>, lowercasing: Bool = false,
    _ body: (UnsafeBufferPointer<UInt8>) throws -> R
  ) rethrows -> R? {
    guard input.count <= Self.maxLength else { return nil }
    word.removeAll(keepingCapacity: true)
    for var byte in input {
      if lowercasing && byte >= 0x41 && byte <= 0x5A { byte |= 0x20 }
      guard (byte >= a && byte <= z) || byte == apostrophe else { return nil }
      word.append(byte)
    }
    run()
    return try word.withUnsafeBufferPointer(body)
  }

  // MARK: - The algorithm

  private mutating func run() {
    if word.count > 2, applyException1() { return }
    // Words of one or two letters are left as they are (after the leading apostrophe).
    if word.first == apostrophe { word.removeFirst() }
    guard word.count > 2 else { return }
    markConsonantY()
    markRegions()
    step0()
    step1a()
    step1b()
    step1c()
    step2()
    step3()
    step4()
    step5()
    restoreY()
  }

  /// Words with their own stems, and words left as they are.
  private static let exceptions1: [(StaticString, StaticString)] = [
    ("skis", "ski"), ("skies", "sky"), ("idly", "idl"), ("gently", "gentl"), ("ugly", "ugli"),
    ("early", "earli"), ("only", "onli"), ("singly", "singl"), ("sky", "sky"), ("news", "news"),
    ("howe", "howe"), ("atlas", "atlas"), ("cosmos", "cosmos"), ("bias", "bias"), ("andes", "andes"),
  ]

  private mutating func applyException1() -> Bool {
    for (form, stem) in Self.exceptions1 where equals(form) {
      // In place: the buffer keeps its capacity for the next word.
      replaceSuffix(word.count, with: stem)
      return true
    }
    return false
  }

  /// An initial y, and every y after a vowel, is a consonant: marked `Y`.
  private mutating func markConsonantY() {
    for index in word.indices where word[index] == y {
      if index == 0 || isVowel(at: index - 1) { word[index] = Y }
    }
  }

  private mutating func markRegions() {
    r1 = word.count
    r2 = word.count
    var start = 0
    for prefix in Self.r1Prefixes where startsWith(prefix) {
      start = prefix.utf8CodeUnitCount
      r1 = start
      break
    }
    if start == 0 {
      guard let end = regionStart(from: 0) else { return }
      r1 = end
    }
    r2 = regionStart(from: r1) ?? word.count
  }

  /// Words whose R1 starts after this prefix (Snowball's list).
  private static let r1Prefixes: [StaticString] = [
    "arsen", "commun", "emerg", "gener", "inter", "later", "organ", "past", "univers",
  ]

  /// The position after the first non-vowel that follows a vowel, searching from `start`.
  private func regionStart(from start: Int) -> Int? {
    var index = start
    while index < word.count && !isVowel(at: index) { index += 1 }
    while index < word.count && isVowel(at: index) { index += 1 }
    return index < word.count ? index + 1 : nil
  }

  private mutating func step0() {
    if endsWith("'s'") {
      word.removeLast(3)
    } else if endsWith("'s") {
      word.removeLast(2)
    } else if endsWith("'") {
      word.removeLast()
    }
  }

  private mutating func step1a() {
    if endsWith("sses") {
      word.removeLast(2)
    } else if endsWith("ied") || endsWith("ies") {
      // "ties" -> "tie", "cries" -> "cri".
      let stem = word.count - 3
      word.removeLast(stem > 1 ? 2 : 1)
    } else if endsWith("us") || endsWith("ss") {
      return
    } else if word.last == s {
      // Delete the s when a vowel comes before the letter before it ("gaps", not "gas").
      guard word.count >= 3, (0..<(word.count - 2)).contains(where: isVowel(at:)) else { return }
      word.removeLast()
    }
  }

  /// Stems before "eed" that stay whole (proceed, exceed, succeed).
  private static let eedStems: [StaticString] = ["succ", "proc", "exc"]
  /// Stems before "ing" that stay whole (evening, canning, inning, earring, herring, outing).
  private static let ingStems: [StaticString] = ["even", "cann", "inn", "earr", "herr", "out"]

  private mutating func step1b() {
    // The longest of eed eedly ed edly ing ingly.
    if let length = endsWith("eedly") ? 5 : endsWith("eed") ? 3 : nil {
      let start = word.count - length
      guard start >= r1, !Self.eedStems.contains(where: { isPrefix($0, length: start) }) else { return }
      replaceSuffix(length, with: "ee")
      return
    }
    let isIng = endsWith("ing")
    guard let length = endsWith("ingly") ? 5 : endsWith("edly") ? 4 : isIng ? 3 : endsWith("ed") ? 2 : nil
    else {
      return
    }
    let start = word.count - length
    if isIng {
      // dying, lying, tying -> die, lie, tie: one non-vowel, then "ying".
      if start == 2, word[1] == y, !isVowel(at: 0) {
        replaceSuffix(4, with: "ie")
        return
      }
      if Self.ingStems.contains(where: { isPrefix($0, length: start) }) { return }
    }
    guard (0..<start).contains(where: isVowel(at:)) else { return }
    word.removeLast(length)
    if endsWith("at") || endsWith("bl") || endsWith("iz") {
      word.append(e)
    } else if endsWithDouble() {
      // "add", "egg", "odd": a double after a single a, e or o keeps both letters.
      if word.count == 3, word[0] == a || word[0] == e || word[0] == o { return }
      word.removeLast()
    } else if r1 == word.count, endsWithShortSyllable(word.count) {
      word.append(e)
    }
  }

  private mutating func step1c() {
    guard let last = word.last, last == y || last == Y, word.count > 2, !isVowel(at: word.count - 2) else {
      return
    }
    word[word.count - 1] = i
  }

  private static let step2Rules: [(StaticString, StaticString)] = [
    ("ization", "ize"), ("ational", "ate"), ("fulness", "ful"), ("ousness", "ous"), ("iveness", "ive"),
    ("tional", "tion"), ("biliti", "ble"), ("lessli", "less"), ("entli", "ent"), ("ation", "ate"),
    ("alism", "al"), ("aliti", "al"), ("ousli", "ous"), ("iviti", "ive"), ("fulli", "ful"), ("enci", "ence"),
    ("anci", "ance"), ("abli", "able"), ("izer", "ize"), ("ator", "ate"), ("alli", "al"), ("bli", "ble"),
    ("ogist", "og"), ("ogi", "og"), ("li", ""),
  ]

  private mutating func step2() {
    guard let (suffix, replacement) = Self.step2Rules.first(where: { endsWith($0.0) }) else { return }
    let start = word.count - suffix.utf8CodeUnitCount
    guard start >= r1 else { return }
    if same(suffix, "ogi") {
      guard start > 0, word[start - 1] == l else { return }
    } else if same(suffix, "li") {
      guard start > 0, Self.isValidLIEnding(word[start - 1]) else { return }
    }
    replaceSuffix(suffix.utf8CodeUnitCount, with: replacement)
  }

  private static let step3Rules: [(StaticString, StaticString)] = [
    ("ational", "ate"), ("tional", "tion"), ("alize", "al"), ("icate", "ic"), ("iciti", "ic"),
    ("ative", ""), ("ical", "ic"), ("ness", ""), ("ful", ""),
  ]

  private mutating func step3() {
    guard let (suffix, replacement) = Self.step3Rules.first(where: { endsWith($0.0) }) else { return }
    let start = word.count - suffix.utf8CodeUnitCount
    guard start >= r1 else { return }
    if same(suffix, "ative"), start < r2 { return }
    replaceSuffix(suffix.utf8CodeUnitCount, with: replacement)
  }

  /// Step 4's suffixes, longest first.
  private static let step4Suffixes: [StaticString] = [
    "ement", "ance", "ence", "able", "ible", "ment", "ant", "ent", "ism", "ate", "iti", "ous", "ive", "ize",
    "ion", "al", "er", "ic",
  ]

  private mutating func step4() {
    guard let suffix = Self.step4Suffixes.first(where: endsWith) else { return }
    let start = word.count - suffix.utf8CodeUnitCount
    guard start >= r2 else { return }
    if same(suffix, "ion") {
      guard start > 0, word[start - 1] == s || word[start - 1] == t else { return }
    }
    word.removeLast(suffix.utf8CodeUnitCount)
  }

  private mutating func step5() {
    guard let last = word.last else { return }
    let start = word.count - 1
    if last == e {
      if start >= r2 || (start >= r1 && !endsWithShortSyllable(start)) { word.removeLast() }
    } else if last == l {
      if start >= r2, start > 0, word[start - 1] == l { word.removeLast() }
    }
  }

  private mutating func restoreY() {
    for index in word.indices where word[index] == Y { word[index] = y }
  }

  // MARK: - Helpers

  @inline(__always)
  private func isVowel(at index: Int) -> Bool {
    switch word[index] {
    case a, e, i, o, u, y: true
    default: false
    }
  }

  private static func isValidLIEnding(_ byte: UInt8) -> Bool {
    switch byte {
    case c, d, UInt8(ascii: "e"), UInt8(ascii: "g"), UInt8(ascii: "h"), UInt8(ascii: "k"), UInt8(ascii: "m"),
      UInt8(ascii: "n"), UInt8(ascii: "r"), t:
      true
    default: false
    }
  }

  /// Whether `word[..<end]` ends in a short syllable: a non-vowel, a vowel, then a
  /// non-vowel other than w, x or Y; or, at the start of the word, a vowel then a non-vowel;
  /// or (Snowball's exception) "past".
  private func endsWithShortSyllable(_ end: Int) -> Bool {
    if end == 2 { return isVowel(at: 0) && !isVowel(at: 1) }
    guard end >= 3 else { return false }
    let last = word[end - 1]
    if !isVowel(at: end - 3) && isVowel(at: end - 2) && !isVowel(at: end - 1) && last != w && last != x
      && last != Y
    {
      return true
    }
    return end >= 4 && word[end - 4] == UInt8(ascii: "p") && word[end - 3] == a && word[end - 2] == s
      && word[end - 1] == t
  }

  private func endsWithDouble() -> Bool {
    guard word.count >= 2, word[word.count - 1] == word[word.count - 2] else { return false }
    switch word[word.count - 1] {
    case b, d, UInt8(ascii: "f"), UInt8(ascii: "g"), UInt8(ascii: "m"), UInt8(ascii: "n"), UInt8(ascii: "p"),
      UInt8(ascii: "r"), t:
      return true
    default: return false
    }
  }

  // The suffixes and stems are `StaticString`s: comparing them reads constant bytes, with no
  // array to allocate or retain per word (the stemmer runs for every word the index stores).

  /// Whether `word[offset..<(offset + text's length)]` is `text`.
  @inline(__always)
  private func matches(_ text: StaticString, at offset: Int) -> Bool {
    let count = text.utf8CodeUnitCount
    guard offset >= 0, offset + count <= word.count else { return false }
    let bytes = text.utf8Start
    for index in 0..<count where word[offset + index] != bytes[index] { return false }
    return true
  }

  private func endsWith(_ suffix: StaticString) -> Bool {
    matches(suffix, at: word.count - suffix.utf8CodeUnitCount)
  }

  private func startsWith(_ prefix: StaticString) -> Bool { matches(prefix, at: 0) }

  private func equals(_ other: StaticString) -> Bool {
    word.count == other.utf8CodeUnitCount && matches(other, at: 0)
  }

  /// Whether `word[..<length]` is exactly `stem`.
  private func isPrefix(_ stem: StaticString, length: Int) -> Bool {
    length == stem.utf8CodeUnitCount && matches(stem, at: 0)
  }

  /// Whether two of the rule tables' suffixes are the same text.
  private func same(_ one: StaticString, _ other: StaticString) -> Bool {
    one.utf8CodeUnitCount == other.utf8CodeUnitCount
      && (0..<one.utf8CodeUnitCount).allSatisfy { one.utf8Start[$0] == other.utf8Start[$0] }
  }

  private mutating func replaceSuffix(_ count: Int, with replacement: StaticString) {
    word.removeLast(count)
    word.append(
      contentsOf: UnsafeBufferPointer(start: replacement.utf8Start, count: replacement.utf8CodeUnitCount))
  }
}

// The letters the algorithm names (Y is a consonant y while stemming).
private let a = UInt8(ascii: "a")
private let b = UInt8(ascii: "b")
private let c = UInt8(ascii: "c")
private let d = UInt8(ascii: "d")
private let e = UInt8(ascii: "e")
private let i = UInt8(ascii: "i")
private let l = UInt8(ascii: "l")
private let o = UInt8(ascii: "o")
private let s = UInt8(ascii: "s")
private let t = UInt8(ascii: "t")
private let u = UInt8(ascii: "u")
private let w = UInt8(ascii: "w")
private let x = UInt8(ascii: "x")
private let y = UInt8(ascii: "y")
private let z = UInt8(ascii: "z")
private let Y = UInt8(ascii: "Y")
private let apostrophe = UInt8(ascii: "'")
