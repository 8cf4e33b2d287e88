import EngramEmbeddings
import EngramTestSupport
import Foundation
import Testing

@Suite("BertEmbedder loading and validation on a tiny synthetic model", .timeLimit(.minutes(5)), .watchdog)
struct BertLoaderTests {
  func load(_ weights: Data? = nil) throws -> BertEmbedder {
    let folder = try TinyModel.write(weights: weights)
    defer { try? FileManager.default.removeItem(at: folder) }
    return try BertEmbedder(directory: folder, modelID: "tiny")
  }

  func loadError(_ weights: Data) -> EmbeddingError? {
    do {
      _ = try load(weights)
      return nil
    } catch {
      return error as? EmbeddingError
    }
  }

  @Test("a valid model loads; vectors are unit length; batch equals one-by-one")
  func forward() async throws {
    let embedder = try load()
    #expect(embedder.dimension == 8)
    #expect(embedder.maxSequenceLength == 12)
    #expect(embedder.modelID == "tiny")
    let texts = ["hello world", "", "unaffable cafe hello world hello world hello world", "明天"]
    let batch = try await embedder.embed(texts)
    #expect(batch.count == texts.count)
    for (text, vector) in zip(texts, batch) {
      #expect(abs(vector.reduce(0) { $0 + $1 * $1 } - 1) < 1e-5)
      let alone = try await embedder.embed([text])[0]
      #expect(maxAbsDifference(alone, vector) < 1e-6)
    }
    #expect(batch[0] != batch[2])
    #expect(try await embedder.embed([]).isEmpty)
  }

  @Test("a tiny pass budget splits the batch without changing the vectors")
  func passes() throws {
    let folder = try TinyModel.write()
    defer { try? FileManager.default.removeItem(at: folder) }
    let whole = try BertEmbedder(directory: folder)
    let split = try BertEmbedder(directory: folder, maxTokensPerPass: 2)
    let texts = ["hello world", "cafe", "hello hello hello", "world"]
    let a = whole.embedSynchronously(texts)
    let b = split.embedSynchronously(texts)
    for (x, y) in zip(a, b) { #expect(maxAbsDifference(x, y) < 1e-6) }
  }

  @Test("any thread count gives the same vectors; a count outside 1...256 is refused")
  func threads() throws {
    let folder = try TinyModel.write()
    defer { try? FileManager.default.removeItem(at: folder) }
    let texts = ["hello world", "cafe", "hello hello hello", "world", "", "unaffable cafe hello"]
    let serial = try BertEmbedder(directory: folder, threads: 1).embedSynchronously(texts)
    for threads in [2, 3, 8] {
      let embedder = try BertEmbedder(directory: folder, threads: threads)
      #expect(embedder.threads == threads)
      for (x, y) in zip(serial, embedder.embedSynchronously(texts)) { #expect(maxAbsDifference(x, y) < 1e-6) }
      let alone = embedder.embedSynchronously([texts[2]])[0]
      #expect(maxAbsDifference(alone, serial[2]) < 1e-6)
    }
    for threads in [0, -1, 257] {
      #expect(throws: EmbeddingError.invalidOption(name: "threads", value: String(threads))) {
        _ = try BertEmbedder(directory: folder, threads: threads)
      }
    }
  }

  @Test("options set the thread count and pass size; options outside their ranges are refused")
  func options() throws {
    let folder = try TinyModel.write()
    defer { try? FileManager.default.removeItem(at: folder) }
    let texts = ["hello world", "cafe", "hello hello hello"]
    let serial = try BertEmbedder(directory: folder, threads: 1).embedSynchronously(texts)
    let embedder = try BertEmbedder(directory: folder, options: .init(threads: 3, maxTokensPerPass: 4))
    #expect(embedder.threads == 3)
    // The pass size is raised to the longest input (12 tokens for the tiny model).
    #expect(embedder.options == BertEmbedder.Options(threads: 3, maxTokensPerPass: 12))
    for (x, y) in zip(serial, embedder.embedSynchronously(texts)) { #expect(maxAbsDifference(x, y) < 1e-6) }
    #expect(BertEmbedder.Options().threads == ProcessInfo.processInfo.activeProcessorCount)
    #expect(throws: EmbeddingError.invalidOption(name: "threads", value: "0")) {
      _ = try BertEmbedder(directory: folder, options: .init(threads: 0))
    }
    #expect(throws: EmbeddingError.invalidOption(name: "maxTokensPerPass", value: "1")) {
      _ = try BertEmbedder(directory: folder, options: .init(threads: 1, maxTokensPerPass: 1))
    }
  }

  @Test("token ids are validated")
  func tokenIDs() throws {
    let embedder = try load()
    #expect(throws: EmbeddingError.invalidTokenID(id: 999, index: 1)) {
      _ = try embedder.embed(tokenIDs: [[2, 3], [2, 999, 3]])
    }
    #expect(throws: EmbeddingError.sequenceTooLong(length: 13, maximum: 12, index: 0)) {
      _ = try embedder.embed(tokenIDs: [Array(repeating: 5, count: 13)])
    }
    #expect(throws: EmbeddingError.emptyInput(index: 0)) { _ = try embedder.embed(tokenIDs: [[]]) }
    let vectors = try embedder.embed(tokenIDs: [[2, 5, 3]])
    #expect(vectors[0] == embedder.embedSynchronously(["hello"])[0])
  }

  @Test("a truncated weights file is a typed error")
  func truncated() {
    let full = TinyModel.safetensors(TinyModel.tensors)
    for length in [0, 5, 40, full.count - 1] {
      guard case .invalidSafetensors = loadError(full.prefix(length)) else {
        Issue.record("length \(length) was not rejected as invalidSafetensors")
        continue
      }
    }
  }

  @Test("a header length beyond the file, or a header that is not JSON, is a typed error")
  func damagedHeader() {
    var huge = TinyModel.safetensors(TinyModel.tensors)
    huge.replaceSubrange(0..<8, with: withUnsafeBytes(of: UInt64(1 << 40).littleEndian) { Data($0) })
    guard case .invalidSafetensors = loadError(huge) else {
      Issue.record("a header length beyond the file was accepted")
      return
    }
    var garbled = TinyModel.safetensors(TinyModel.tensors)
    garbled[8] = UInt8(ascii: "x")
    guard case .invalidSafetensors = loadError(garbled) else {
      Issue.record("a garbled header was accepted")
      return
    }
  }

  @Test("missing tensor, wrong shape and wrong dtype are typed errors")
  func tensors() {
    var missing = TinyModel.tensors
    missing.removeAll { $0.name == "encoder.layer.0.output.dense.bias" }
    guard case .missingTensor(let name, _) = loadError(TinyModel.safetensors(missing)) else {
      Issue.record("missing tensor accepted")
      return
    }
    #expect(name == "encoder.layer.0.output.dense.bias")

    var reshaped = TinyModel.tensors
    reshaped[0].shape = [TinyModel.vocabulary.count, 4]
    #expect(
      loadError(TinyModel.safetensors(reshaped))
        == .tensorShapeMismatch(
          name: "embeddings.word_embeddings.weight", expected: [TinyModel.vocabulary.count, 8],
          actual: [TinyModel.vocabulary.count, 4]))

    var halves = TinyModel.tensors
    halves[3].dtype = "F16"
    #expect(
      loadError(TinyModel.safetensors(halves))
        == .unsupportedDType(name: "embeddings.LayerNorm.weight", dtype: "F16"))
  }
}
