import EngramTestSupport
import Testing

@testable import EngramEmbeddings

@Suite(.timeLimit(.minutes(5)), .watchdog) struct EmbedderSpecTests {
  @Test(arguments: [
    ("minilm", "minilm"), ("e5-small", "e5-small"), ("multilingual-e5-small", "e5-small"),
    ("hashing", "hashing"), ("hashing:64", "hashing:64"), ("model:/m/x", "model:/m/x"),
    (
      "http:http://127.0.0.1:11434#model=nomic&dim=768&api=ollama",
      "http:http://127.0.0.1:11434#model=nomic&dim=768&api=ollama"
    ),
    (
      "https://api.example.com#model=e3&dim=1536&key=OPENAI_API_KEY",
      "http:https://api.example.com#model=e3&dim=1536&key=OPENAI_API_KEY"
    ),
  ])
  func specsRoundTripThroughText(input: String, text: String) throws {
    let spec = try EmbedderSpec.parse(input).get()
    #expect(spec.text == text)
    #expect(try EmbedderSpec.parse(spec.text).get() == spec)
  }

  @Test(arguments: [
    "", "hashing:0", "hashing:abc", "http:http://h#dim=3", "http:http://h#model=m",
    "http:ftp://h#model=m&dim=3", "http:http://h#model=m&dim=3&api=grpc",
  ])
  func invalidSpecsAreRefused(input: String) {
    #expect(throws: EmbedderSpec.SpecError.self) { try EmbedderSpec.parse(input).get() }
  }

  @Test func specsAreInferredFromStoredModelIDs() {
    #expect(EmbedderSpec.inferred(fromModelID: "hashing-v1-128") == .hashing(dimension: 128))
    #expect(EmbedderSpec.inferred(fromModelID: "sentence-transformers/all-MiniLM-L6-v2") == .minilm)
    #expect(EmbedderSpec.inferred(fromModelID: "intfloat/multilingual-e5-small-q4") == .e5Small)
    #expect(EmbedderSpec.inferred(fromModelID: "http:nomic") == nil)
  }

  @Test func e5SmallWithoutItsFileNamesTheFix() {
    let path = "/nonexistent/e5-small-q4.bin"
    #expect(throws: EmbeddingError.e5ModelNotFound(path: path)) {
      _ = try EmbedderSpec.e5Small.makeEmbedder(environment: ["ENGRAM_E5_MODEL": path])
    }
  }

  @Test func hashingSpecsBuildTheirEmbedder() throws {
    let embedder = try EmbedderSpec.hashing(dimension: 48).makeEmbedder(environment: [:])
    #expect(embedder.dimension == 48)
    #expect(embedder.modelID == "hashing-v1-48")
  }
}
