import EngramEmbeddings
import EngramTestSupport
import Foundation
import Testing

@Suite("BertEmbedder parity with sentence-transformers", .timeLimit(.minutes(5)), .watchdog)
struct BertEmbedderTests {
  static let fixture = try! ReferenceFixture.load()
  static let sentenceIDs = fixture.sentences.map(\.id)

  @Test("token ids match BertTokenizer", arguments: sentenceIDs)
  func tokenIDs(id: String) throws {
    let embedder = try InstalledModel.embedder()
    let sentence = try #require(Self.fixture.sentences.first { $0.id == id })
    #expect(embedder.tokenizer.encode(sentence.exactText) == sentence.inputIds)
  }

  @Test(
    "one text alone matches the reference vector, on 1, 2 and 3 threads",
    arguments: sentenceIDs, InstalledModel.threadCounts)
  func single(id: String, threads: Int) async throws {
    let embedder = try InstalledModel.embedder(threads: threads)
    let sentence = try #require(Self.fixture.sentences.first { $0.id == id })
    let vector = try await embedder.embed([sentence.exactText])[0]
    #expect(vector.count == 384)
    #expect(cosine(vector, sentence.reference) >= 0.99999)
    #expect(maxAbsDifference(vector, sentence.reference) <= 5e-5)
  }

  @Test(
    "every text inside a mixed batch of 32 matches the reference vector, on 1, 2 and 3 threads",
    arguments: InstalledModel.threadCounts)
  func batch(threads: Int) async throws {
    let embedder = try InstalledModel.embedder(threads: threads)
    let sentences = Self.fixture.sentences
    let batch = (0..<32).map { sentences[($0 * 7) % sentences.count] }
    let vectors = try await embedder.embed(batch.map(\.exactText))
    #expect(vectors.count == 32)
    for (sentence, vector) in zip(batch, vectors) {
      #expect(cosine(vector, sentence.reference) >= 0.99999, "\(sentence.id)")
      #expect(maxAbsDifference(vector, sentence.reference) <= 5e-5, "\(sentence.id)")
    }
  }
}
