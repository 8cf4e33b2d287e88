import Engram

/// `--precision f32|int8`: how the on-device embedders' linear layers compute (commands that
/// embed declare it; the tool applies it as `$ENGRAM_PRECISION`, which it overrides).
public struct PrecisionOptions: ParsableOptions {
  /// The precision named, if any.
  @Option(
    valueName: "f32|int8",
    help:
      "How minilm and e5-small compute: f32, or int8 (integer products, cosine >= 0.999 to f32) "
      + "(default: $ENGRAM_PRECISION, else int8). Vectors of both are one space.")
  public var precision: String?

  /// No precision named.
  public init() {}

  /// `environment` with `$ENGRAM_PRECISION` set to the precision named, if one was.
  /// - Throws: ``UsageError`` for a name that is neither `f32` nor `int8`.
  func applied(to environment: [String: String]) throws(UsageError) -> [String: String] {
    guard let precision else { return environment }
    guard let parsed = EmbeddingPrecision(name: precision) else {
      throw UsageError("invalid precision '\(precision)': use f32 or int8")
    }
    var environment = environment
    environment[EmbeddingPrecision.environmentKey] = parsed.rawValue
    return environment
  }
}
