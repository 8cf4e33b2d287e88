import EngramEmbeddings

/// The embedder `--model NAME` names for the retrieval suites: `minilm`, `e5-small` or
/// `hashing`, running its forward passes on `threads` threads.
func benchEmbedder(_ name: String, threads: Int) throws -> any Embedder {
  switch name {
  case "minilm": return try BertEmbedder(locator: ModelLocator(), options: .init(threads: threads))
  case "e5-small": return try E5Embedder(options: .init(threads: threads))
  case "hashing": return try HashingEmbedder()
  default: throw BenchError("--model must be minilm, e5-small or hashing, not \(name)")
  }
}
