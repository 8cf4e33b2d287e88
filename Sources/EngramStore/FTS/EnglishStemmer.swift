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
  private static let exceptions1: [([UInt8], [UInt8])] = [
    ("skis", "ski"), ("skies", "sky"), ("idly", "idl"), ("gently", "gentl"), ("ugly", "ugli"),
    ("early", "earli"), ("only", "onli"), ("singly", "singl"), ("sky", "sky"), ("news", "news"),
    ("howe", "howe"), ("atlas", "atlas"), ("cosmos", "cosmos"), ("bias", "bias"), ("andes", "andes"),
  ].map { (Array($0.0.utf8), Array($0.1.utf8)) }

  private mutating func applyException1() -> Bool {
    for (form, stem) in Self.exceptions1 where equals(form) {
      word = stem
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
      start = prefix.count
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
  private static let r1Prefixes: [[UInt8]] = [
    "arsen", "commun", "emerg", "gener", "inter", "later", "organ", "past", "univers",
  ]
  .map { Array($0.utf8) }

  /// The position after the first non-vowel that follows a vowel, searching from `start`.
  private func regionStart(from start: Int) -> Int? {
    var index = start
    while index < word.count && !isVowel(at: index) { index += 1 }
    while index < word.count && isVowel(at: index) { index += 1 }
    return index < word.count ? index + 1 : nil
  }

  private mutating func step0() {
    for suffix in [[apostrophe, s, apostrophe], [apostrophe, s], [apostrophe]] where endsWith(suffix) {
      word.removeLast(suffix.count)
      return
    }
  }

  private mutating func step1a() {
    if endsWith(sses) {
      word.removeLast(2)
    } else if endsWith(ied) || endsWith(ies) {
      // "ties" -> "tie", "cries" -> "cri".
      let stem = word.count - 3
      word.removeLast(stem > 1 ? 2 : 1)
    } else if endsWith(us) || endsWith(ss) {
      return
    } else if word.last == s {
      // Delete the s when a vowel comes before the letter before it ("gaps", not "gas").
      guard word.count >= 3, (0..<(word.count - 2)).contains(where: isVowel(at:)) else { return }
      word.removeLast()
    }
  }

  /// Stems before "eed" that stay whole (proceed, exceed, succeed).
  private static let eedStems: [[UInt8]] = ["succ", "proc", "exc"].map { Array($0.utf8) }
  /// Stems before "ing" that stay whole (evening, canning, inning, earring, herring, outing).
  private static let ingStems: [[UInt8]] = ["even", "cann", "inn", "earr", "herr", "out"].map {
    Array($0.utf8)
  }

  private mutating func step1b() {
    // The longest of eed eedly ed edly ing ingly.
    if let suffix = [eedly, eed].first(where: endsWith) {
      let start = word.count - suffix.count
      guard start >= r1, !Self.eedStems.contains(where: { isPrefix($0, length: start) }) else { return }
      replaceSuffix(suffix.count, with: [e, e])
      return
    }
    guard let suffix = [ingly, edly, ing, ed].first(where: endsWith) else { return }
    let start = word.count - suffix.count
    if suffix == ing {
      // dying, lying, tying -> die, lie, tie: one non-vowel, then "ying".
      if start == 2, word[1] == y, !isVowel(at: 0) {
        replaceSuffix(4, with: [i, e])
        return
      }
      if Self.ingStems.contains(where: { isPrefix($0, length: start) }) { return }
    }
    guard (0..<start).contains(where: isVowel(at:)) else { return }
    word.removeLast(suffix.count)
    if endsWith(at) || endsWith(bl) || endsWith(iz) {
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

  private static let step2Rules: [([UInt8], [UInt8])] = [
    ("ization", "ize"), ("ational", "ate"), ("fulness", "ful"), ("ousness", "ous"), ("iveness", "ive"),
    ("tional", "tion"), ("biliti", "ble"), ("lessli", "less"), ("entli", "ent"), ("ation", "ate"),
    ("alism", "al"), ("aliti", "al"), ("ousli", "ous"), ("iviti", "ive"), ("fulli", "ful"), ("enci", "ence"),
    ("anci", "ance"), ("abli", "able"), ("izer", "ize"), ("ator", "ate"), ("alli", "al"), ("bli", "ble"),
    ("ogist", "og"), ("ogi", "og"), ("li", ""),
  ].map { (Array($0.0.utf8), Array($0.1.utf8)) }

  private mutating func step2() {
    guard let (suffix, replacement) = Self.step2Rules.first(where: { endsWith($0.0) }) else { return }
    let start = word.count - suffix.count
    guard start >= r1 else { return }
    if suffix == ogi {
      guard start > 0, word[start - 1] == l else { return }
    } else if suffix == li {
      guard start > 0, Self.isValidLIEnding(word[start - 1]) else { return }
    }
    replaceSuffix(suffix.count, with: replacement)
  }

  private static let step3Rules: [([UInt8], [UInt8])] = [
    ("ational", "ate"), ("tional", "tion"), ("alize", "al"), ("icate", "ic"), ("iciti", "ic"),
    ("ative", ""), ("ical", "ic"), ("ness", ""), ("ful", ""),
  ].map { (Array($0.0.utf8), Array($0.1.utf8)) }

  private mutating func step3() {
    guard let (suffix, replacement) = Self.step3Rules.first(where: { endsWith($0.0) }) else { return }
    let start = word.count - suffix.count
    guard start >= r1 else { return }
    if suffix == ative, start < r2 { return }
    replaceSuffix(suffix.count, with: replacement)
  }

  /// Step 4's suffixes, longest first.
  private static let step4Suffixes: [[UInt8]] = [
    "ement", "ance", "ence", "able", "ible", "ment", "ant", "ent", "ism", "ate", "iti", "ous", "ive", "ize",
    "ion", "al", "er", "ic",
  ].map { Array($0.utf8) }

  private mutating func step4() {
    guard let suffix = Self.step4Suffixes.first(where: endsWith) else { return }
    let start = word.count - suffix.count
    guard start >= r2 else { return }
    if suffix == ion {
      guard start > 0, word[start - 1] == s || word[start - 1] == t else { return }
    }
    word.removeLast(suffix.count)
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

  private func endsWith(_ suffix: [UInt8]) -> Bool {
    guard suffix.count <= word.count else { return false }
    let offset = word.count - suffix.count
    for index in suffix.indices where word[offset + index] != suffix[index] { return false }
    return true
  }

  private func startsWith(_ prefix: [UInt8]) -> Bool {
    prefix.count <= word.count && word.starts(with: prefix)
  }

  private func equals(_ other: [UInt8]) -> Bool { word == other }

  /// Whether `word[..<length]` is exactly `stem`.
  private func isPrefix(_ stem: [UInt8], length: Int) -> Bool {
    length == stem.count && word.starts(with: stem)
  }

  private mutating func replaceSuffix(_ count: Int, with replacement: [UInt8]) {
    word.removeLast(count)
    word.append(contentsOf: replacement)
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
private let sses = Array("sses".utf8)
private let ied = Array("ied".utf8)
private let ies = Array("ies".utf8)
private let us = Array("us".utf8)
private let ss = Array("ss".utf8)
private let eed = Array("eed".utf8)
private let eedly = Array("eedly".utf8)
private let ed = Array("ed".utf8)
private let edly = Array("edly".utf8)
private let ing = Array("ing".utf8)
private let ingly = Array("ingly".utf8)
private let at = Array("at".utf8)
private let bl = Array("bl".utf8)
private let iz = Array("iz".utf8)
private let ogi = Array("ogi".utf8)
private let li = Array("li".utf8)
private let ative = Array("ative".utf8)
private let ion = Array("ion".utf8)
