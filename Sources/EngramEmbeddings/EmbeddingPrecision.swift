/// How the linear layers of the on-device BERT embedders (`BertEmbedder`, `E5Embedder`) compute.
///
/// Both precisions produce vectors of the same space, so a memory's recorded embedder does
/// not name one: a memory filled at either precision is searched at either, with no reindex.
/// On the test fixtures the int8 vectors keep a cosine to the float ones of 0.9995 at worst
/// for MiniLM (`[CLS] [SEP]` alone) and 0.9999 for e5-small, but the two activation passes
/// that buy this leave int8 only about 1.3x the float path's throughput (1.9x
/// sentence-transformers', short of the 2.5x asked), so it is opt-in; see `docs/benchmarks.md`.
public enum EmbeddingPrecision: String, Sendable, CaseIterable {
  /// float32 weights and BLAS / float products: the reference path and the default.
  case float32 = "f32"
  /// Weights quantized once at load to int8 per output row in groups of 64 inputs,
  /// activations per row in one int8 pass, or in two (the row, then its residual) for the rows
  /// dominated by one channel and the rows of sequences of at most 8 tokens; exact integer dot
  /// products (AVX-512 VNNI, AVX2, NEON sdot or portable C); attention, softmax, GELU and
  /// LayerNorm stay float.
  case int8

  /// The default precision: float32 (int8 reaches the 0.999 cosine the project asks, not yet
  /// the speed; see `docs/benchmarks.md` for the parity and speed figures).
  public static let `default` = EmbeddingPrecision.float32

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
