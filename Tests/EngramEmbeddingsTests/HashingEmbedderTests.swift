import EngramEmbeddings
import EngramTestSupport
import Testing

@Suite("HashingEmbedder", .timeLimit(.minutes(5)), .watchdog)
struct HashingEmbedderTests {
  @Test("deterministic, unit length, default 384 dimensions")
  func deterministic() async throws {
    let embedder = try HashingEmbedder()
    #expect(embedder.modelID == "hashing-v1-384")
    let first = try await embedder.embed(["The quick brown fox", "another text"])
    let second = try await embedder.embed(["The quick brown fox", "another text"])
    #expect(first == second)
    #expect(first[0].count == 384)
    #expect(abs(first[0].reduce(0) { $0 + $1 * $1 } - 1) < 1e-5)
    #expect(first[0] != first[1])
  }

  @Test("stable across runs and builds: pinned vector of \"hello\" at dimension 8")
  func pinned() throws {
    let vector = try HashingEmbedder(dimension: 8).embedSynchronously(["hello"])[0]
    let pinned: [Float] = [-0.5547002, 0, 0.5547002, -0.5547002, 0, 0.2773501, 0, 0]
    #expect(maxAbsDifference(vector, pinned) < 1e-6)
  }

  @Test("related texts are closer than unrelated ones")
  func similarity() throws {
    let embedder = try HashingEmbedder()
    let vectors = try embedder.embedSynchronously([
      "I went to the support group yesterday", "She goes to a support group", "The stock market fell sharply",
    ])
    #expect(cosine(vectors[0], vectors[1]) > cosine(vectors[0], vectors[2]) + 0.1)
  }

  @Test("CJK text without spaces: shared characters and bigrams raise similarity")
  func cjk() throws {
    let embedder = try HashingEmbedder()
    let vectors = try embedder.embedSynchronously(["明天下午三点提醒我开会", "明天下午开会", "今天天气很好"])
    #expect(cosine(vectors[0], vectors[1]) > 0.5)
    #expect(cosine(vectors[0], vectors[1]) > cosine(vectors[0], vectors[2]) + 0.2)
  }

  @Test("case-insensitive, and punctuation-only text still embeds")
  func caseAndSymbols() throws {
    let embedder = try HashingEmbedder(dimension: 64)
    let vectors = try embedder.embedSynchronously(["Hello World", "hello world", "?!", "🙂"])
    #expect(vectors[0] == vectors[1])
    #expect(vectors[2].contains { $0 != 0 })
    #expect(vectors[2] != vectors[3])
  }

  @Test("empty or whitespace-only text throws emptyInput with its index", arguments: ["", "   ", "\n\t"])
  func empty(text: String) throws {
    let embedder = try HashingEmbedder()
    #expect(throws: EmbeddingError.emptyInput(index: 1)) {
      _ = try embedder.embedSynchronously(["ok", text])
    }
  }

  @Test("an empty list returns an empty list")
  func emptyList() async throws {
    let vectors = try await HashingEmbedder().embed([])
    #expect(vectors.isEmpty)
  }

  @Test("dimension out of range is rejected", arguments: [0, 7, 65_537, -1])
  func badDimension(dimension: Int) {
    #expect(throws: EmbeddingError.invalidDimension(dimension)) {
      _ = try HashingEmbedder(dimension: dimension)
    }
  }
}
