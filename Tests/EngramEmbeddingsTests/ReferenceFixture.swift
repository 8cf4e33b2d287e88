import EngramEmbeddings
import Foundation
import Testing

/// The sentence-transformers reference outputs in `Fixtures/minilm-reference.json`.
struct ReferenceFixture: Decodable {
  struct Sentence: Decodable {
    var id: String
    var text: String
    /// Hex code points (`"0x20"`) for texts with control characters.
    var textCodepoints: [String]?
    var inputIds: [Int32]
    var tokens: [String]
    var truncated: Bool
    var embedding: [Double]

    /// The exact text: `text_codepoints` when present (JSON cannot carry every control character).
    var exactText: String {
      guard let textCodepoints else { return text }
      var view = String.UnicodeScalarView()
      view.append(
        contentsOf: textCodepoints.compactMap {
          UInt32($0.dropFirst(2), radix: 16).flatMap(Unicode.Scalar.init)
        })
      return String(view)
    }

    var reference: [Float] { embedding.map { Float($0) } }
  }

  var dim: Int
  var maxSeqLength: Int
  var sentences: [Sentence]

  static func load() throws -> ReferenceFixture {
    let url = try #require(
      Bundle.module.url(forResource: "minilm-reference", withExtension: "json", subdirectory: "Fixtures"))
    let decoder = JSONDecoder()
    decoder.keyDecodingStrategy = .convertFromSnakeCase
    return try decoder.decode(ReferenceFixture.self, from: Data(contentsOf: url))
  }
}

/// The installed all-MiniLM-L6-v2 on the float path (the reference tests' tolerances are
/// float32 rounding), loaded once per thread count, and once on the int8 path per thread
/// count; a missing model fails the test, never skips it.
enum InstalledModel {
  static let threadCounts = [1, 2, 3]
  static let shared = load(.float32)
  static let quantized = load(.int8)

  private static func load(_ precision: EmbeddingPrecision) -> [Int: Result<BertEmbedder, EmbeddingError>] {
    Dictionary(
      uniqueKeysWithValues: threadCounts.map { threads in
        (
          threads,
          Result { () throws(EmbeddingError) in
            try BertEmbedder(options: .init(threads: threads, precision: precision))
          }
        )
      })
  }

  static func embedder(threads: Int = 1, precision: EmbeddingPrecision = .float32) throws -> BertEmbedder {
    let models = precision == .float32 ? shared : quantized
    switch models[threads] ?? .failure(.invalidOption(name: "threads", value: String(threads))) {
    case .success(let embedder): return embedder
    case .failure(let error):
      Issue.record("all-MiniLM-L6-v2 is not installed — run `make test` (it installs the model): \(error)")
      throw error
    }
  }
}

/// Cosine similarity of two vectors of equal length.
func cosine(_ a: [Float], _ b: [Float]) -> Float {
  var dot: Float = 0
  var aa: Float = 0
  var bb: Float = 0
  for index in a.indices {
    dot += a[index] * b[index]
    aa += a[index] * a[index]
    bb += b[index] * b[index]
  }
  return dot / (aa.squareRoot() * bb.squareRoot())
}

/// Largest absolute component difference.
func maxAbsDifference(_ a: [Float], _ b: [Float]) -> Float {
  zip(a, b).map { abs($0 - $1) }.max() ?? .infinity
}
