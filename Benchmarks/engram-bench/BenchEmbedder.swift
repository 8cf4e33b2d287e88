import EngramEmbeddings

/// The embedder `--model NAME` names for the retrieval suites: `minilm`, `e5-small` or
/// `hashing`, running its forward passes on `threads` threads at `precision` (`--precision`).
func benchEmbedder(_ name: String, threads: Int, precision: EmbeddingPrecision = .default) throws
  -> any Embedder
{
  let options = BertEmbedder.Options(threads: threads, precision: precision)
  switch name {
  case "minilm": return try BertEmbedder(locator: ModelLocator(), options: options)
  case "e5-small": return try E5Embedder(options: options)
  case "hashing": return try HashingEmbedder()
  default: throw BenchError("--model must be minilm, e5-small or hashing, not \(name)")
  }
}

/// The `--precision f32|int8` option (default `EmbeddingPrecision.default`).
func benchPrecision(_ arguments: inout BenchArguments) throws -> EmbeddingPrecision {
  let name = arguments.string("precision", default: EmbeddingPrecision.default.rawValue)
  guard let precision = EmbeddingPrecision(name: name) else {
    throw BenchError("--precision must be f32 or int8, not \(name)")
  }
  return precision
}
