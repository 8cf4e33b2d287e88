import EngramEmbeddings
import EngramTestSupport
import Foundation
import Testing

@Suite("WordPieceTokenizer rules on a small vocabulary", .timeLimit(.minutes(5)), .watchdog)
struct WordPieceTokenizerTests {
  static let vocabulary = [
    "[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "hello", "world", "un", "##aff", "##able", "cafe", ".", ",",
    "!",
    "'", "s", "明", "天", "a", "##a", "-", "$", "^", "¿", "naive",
  ]

  func tokenizer(lowercases: Bool = true, maxSequenceLength: Int = 256) throws -> WordPieceTokenizer {
    try WordPieceTokenizer(
      vocabulary: Self.vocabulary, lowercases: lowercases, maxSequenceLength: maxSequenceLength)
  }

  @Test("greedy longest match with ## continuations, [UNK] for an unsplittable word")
  func wordPiece() throws {
    let tokenizer = try tokenizer()
    #expect(tokenizer.tokenize("unaffable hello") == ["un", "##aff", "##able", "hello"])
    #expect(tokenizer.tokenize("unaffablex world") == ["[UNK]", "world"])
  }

  @Test("lower-casing and accent stripping when uncased, kept when cased")
  func casing() throws {
    #expect(try tokenizer().tokenize("HELLO Café naïve") == ["hello", "cafe", "naive"])
    #expect(try tokenizer(lowercases: false).tokenize("HELLO") == ["[UNK]"])
  }

  @Test("punctuation is split off: ASCII symbols and Unicode P*")
  func punctuation() throws {
    let tokenizer = try tokenizer()
    #expect(tokenizer.basicTokens("hello,world!") == ["hello", ",", "world", "!"])
    #expect(tokenizer.basicTokens("$5^a") == ["$", "5", "^", "a"])
    #expect(tokenizer.basicTokens("¿hello") == ["¿", "hello"])
    #expect(tokenizer.basicTokens("it's") == ["it", "'", "s"])
  }

  @Test("CJK ideographs become single tokens; control characters vanish; tabs split words")
  func cjkAndControls() throws {
    let tokenizer = try tokenizer()
    #expect(tokenizer.basicTokens("明天hello") == ["明", "天", "hello"])
    #expect(
      tokenizer.basicTokens("hel\u{0}lo\u{FFFD} wor\u{200B}ld\thello\u{00A0}a") == [
        "hello", "world", "hello", "a",
      ])
    #expect(tokenizer.basicTokens(" \t\n ").isEmpty)
  }

  @Test("a word over 100 characters is one [UNK]")
  func longWord() throws {
    let tokenizer = try tokenizer()
    #expect(tokenizer.tokenize(String(repeating: "a", count: 100)).count == 100)
    #expect(tokenizer.tokenize(String(repeating: "a", count: 101)) == ["[UNK]"])
  }

  @Test("encode adds [CLS]/[SEP] and truncates to maxSequenceLength")
  func truncation() throws {
    let tokenizer = try tokenizer(maxSequenceLength: 5)
    #expect(tokenizer.encode("") == [2, 3])
    #expect(tokenizer.encode("hello world") == [2, 5, 6, 3])
    #expect(tokenizer.encode("hello world hello world") == [2, 5, 6, 5, 3])
    #expect(tokenizer.encode("unaffable unaffable") == [2, 7, 8, 9, 3])
  }

  @Test("a vocabulary without special tokens is rejected")
  func missingSpecials() {
    #expect(throws: EmbeddingError.invalidVocabulary(path: "vocab.txt", reason: "no [UNK] token")) {
      _ = try WordPieceTokenizer(vocabulary: ["hello"])
    }
    #expect(throws: EmbeddingError.invalidOption(name: "maxSequenceLength", value: "1")) {
      _ = try WordPieceTokenizer(vocabulary: Self.vocabulary, maxSequenceLength: 1)
    }
  }

  @Test("a vocabulary file reads the same tokens with LF or CRLF line ends, with or without a final one")
  func vocabularyFileLineEnds() throws {
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent(
      "engram-vocab-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: folder) }
    let reference = try tokenizer()
    for (name, text) in [
      ("lf", Self.vocabulary.joined(separator: "\n") + "\n"),
      ("crlf", Self.vocabulary.joined(separator: "\r\n") + "\r\n"),
      ("bare", Self.vocabulary.joined(separator: "\n")),
    ] {
      let url = folder.appendingPathComponent("\(name).txt")
      try Data(text.utf8).write(to: url)
      let loaded = try WordPieceTokenizer(vocabularyFile: url)
      #expect(loaded.vocabularySize == Self.vocabulary.count, "\(name)")
      #expect((0..<Int32(Self.vocabulary.count)).map { loaded.token(for: $0) } == Self.vocabulary, "\(name)")
      #expect(loaded.encode("Unaffable cafe, naive 明天!") == reference.encode("Unaffable cafe, naive 明天!"))
    }
  }
}
