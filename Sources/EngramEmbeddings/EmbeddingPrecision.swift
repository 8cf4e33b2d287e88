/// How the linear layers of the on-device BERT embedders (`BertEmbedder`, `E5Embedder`) compute.
///
/// Both precisions produce vectors of the same space, so a memory's recorded embedder does
/// not name one: a memory filled at either precision is searched at either, with no reindex.
/// On the test fixtures the int8 vectors keep a cosine to the float ones of 0.99925 at worst
/// for MiniLM and 0.9997 for e5-small (on 2,760 LoCoMo turns a mean of 0.9994, 0.9975 at
/// worst), at 1.8x the float path's throughput (2.7x sentence-transformers', in CPU time), so
/// int8 is the default; see `docs/benchmarks.md`.
public enum EmbeddingPrecision: String, Sendable, CaseIterable {
  /// float32 weights and BLAS / float products: the reference path (`--precision f32`).
  case float32 = "f32"
  /// Weights quantized once at load to int8 per output row in groups of 64 inputs (128 for
  /// multilingual-e5-small), activations per row in one int8 pass, or in two (the row, then its residual) for the rows
  /// dominated by one channel and the rows of sequences of at most 8 tokens; exact integer dot
  /// products (AVX-512 VNNI, AVX2, NEON sdot or portable C); attention, softmax, GELU and
  /// LayerNorm stay float.
  case int8

  /// The default precision: int8 (the fixtures' 0.999 cosine to float, LoCoMo retrieval within
  /// 0.005, 2.7x sentence-transformers' throughput; see `docs/benchmarks.md` for the figures).
  public static let `default` = EmbeddingPrecision.int8

  /// The environment variable that selects the precision of every embedder a process builds
  /// through `EmbedderSpec.makeEmbedder(environment:)`: `f32` or `int8`.
  public static let environmentKey = "ENGRAM_PRECISION"

  /// Parses `f32` / `float32` / `int8` (any case).
  public init?(name: String) {
    switch name.lowercased() {
    case "f32", "float32", "float": self = .float32
    case "int8", "i8": self = .int8
    default: return nil
    }
  }
}
