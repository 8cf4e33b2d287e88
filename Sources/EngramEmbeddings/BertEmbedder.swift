import EngramCore
import Foundation
import Synchronization

// BLAS: Accelerate on Apple platforms (untested: this project builds and tests on Linux only),
// OpenBLAS elsewhere.
#if canImport(Accelerate)
  import Accelerate
#else
  import CBLAS
#endif

/// The default embedder: a BERT-family sentence-transformers model (all-MiniLM-L6-v2) computed
/// from a memory-mapped `model.safetensors`, its linear layers in int8 (`EmbeddingPrecision`)
/// or on BLAS in float32.
///
/// At `.float32` (the default) the output matches
/// `SentenceTransformer.encode(normalize_embeddings=True)` to float32 rounding; `.int8` keeps a
/// cosine of 0.986 or more to that on the test fixtures (see `EmbeddingPrecision`).
/// Any text is accepted, empty included (it embeds `[CLS] [SEP]`, as sentence-transformers does).
///
/// Sendable because the weights are read-only mapped pages fixed at `init`, each call
/// allocates its own scratch memory, and forward passes run one at a time: OpenBLAS documents
/// that callers running its threaded kernels concurrently conflict with its own thread pool,
/// and that pool already uses every core for one pass.
public final class BertEmbedder: Embedder, @unchecked Sendable {
  /// The id stored beside each vector, `sentence-transformers/<folder name>` unless given.
  public let modelID: String
  /// The vector length (`hidden_size`, 384 for MiniLM-L6).
  public let dimension: Int
  /// Longest input in tokens, `[CLS]` and `[SEP]` included (256 for MiniLM-L6).
  public let maxSequenceLength: Int
  /// The model folder.
  public let directory: URL
  /// The shape read from the folder's configuration files.
  public let configuration: BertConfiguration
  /// The tokenizer built from `vocab.txt`.
  public let tokenizer: WordPieceTokenizer
  /// How this embedder runs: the options given at `init`, with `maxTokensPerPass` raised to
  /// at least `maxSequenceLength`.
  public let options: Options
  /// Most tokens packed into one forward pass; larger inputs run in several passes.
  public var maxTokensPerPass: Int { options.maxTokensPerPass }
  /// Threads one forward pass uses: a batch is split into groups of sequences, a single
  /// sequence splits its products and attention heads.
  public var threads: Int { options.threads }

  /// How a `BertEmbedder` runs. The defaults suit a process that embeds on its own; a
  /// process that shares the machine (a server, a benchmark) sets `threads`.
  public struct Options: Sendable, Equatable {
    /// Threads per forward pass, 1...256. Default: the active processor count.
    public var threads: Int
    /// Most tokens packed into one forward pass, at least 2 (raised to the model's longest
    /// input). Bounds scratch memory, about 40 KB per token for MiniLM-L6. Default: 8192.
    public var maxTokensPerPass: Int
    /// How the linear layers compute (see `EmbeddingPrecision`). Default: `.float32`.
    public var precision: EmbeddingPrecision

    /// Options with the documented defaults, or the values given.
    public init(
      threads: Int = ProcessInfo.processInfo.activeProcessorCount, maxTokensPerPass: Int = 8192,
      precision: EmbeddingPrecision = .default
    ) {
      self.threads = threads
      self.maxTokensPerPass = maxTokensPerPass
      self.precision = precision
    }
  }

  let model: BertModel
  /// Serializes forward passes (see the type's documentation).
  private let forward = Mutex(())

  /// Loads the model folder `directory` (memory-mapping its weights).
  /// - Parameters:
  ///   - modelID: the id to report; defaults to `sentence-transformers/<folder name>`.
  ///   - maxTokensPerPass: bounds scratch memory (about 40 KB per token for MiniLM-L6).
  ///   - threads: threads per forward pass, 1...256; defaults to the active processor count.
  /// - Throws: `EmbeddingError` naming the missing or damaged file, or `.invalidOption`.
  public convenience init(
    directory: URL, modelID: String? = nil, maxTokensPerPass: Int = 8192,
    threads: Int = ProcessInfo.processInfo.activeProcessorCount
  ) throws(EmbeddingError) {
    try self.init(
      directory: directory, modelID: modelID,
      options: Options(threads: threads, maxTokensPerPass: maxTokensPerPass))
  }

  /// Loads the model folder `directory` (memory-mapping its weights) to run with `options`.
  /// - Parameter modelID: the id to report; defaults to `sentence-transformers/<folder name>`.
  /// - Throws: `EmbeddingError` naming the missing or damaged file, or `.invalidOption` for
  ///   options outside their documented ranges.
  public init(directory: URL, modelID: String? = nil, options: Options) throws(EmbeddingError) {
    try ModelLocator.validate(directory)
    guard options.maxTokensPerPass >= 2 else {
      throw .invalidOption(name: "maxTokensPerPass", value: String(options.maxTokensPerPass))
    }
    guard (1...256).contains(options.threads) else {
      throw .invalidOption(name: "threads", value: String(options.threads))
    }
    let configuration = try BertConfiguration(directory: directory)
    let tokenizer = try WordPieceTokenizer(
      vocabularyFile: directory.appendingPathComponent("vocab.txt"), lowercases: configuration.lowercases,
      maxSequenceLength: configuration.maxSequenceLength)
    guard tokenizer.vocabularySize == configuration.vocabularySize else {
      throw .invalidVocabulary(
        path: directory.appendingPathComponent("vocab.txt").path,
        reason: "\(tokenizer.vocabularySize) tokens, config.json says \(configuration.vocabularySize)")
    }
    model = try BertModel(
      file: directory.appendingPathComponent("model.safetensors"), configuration: configuration,
      precision: options.precision)
    model.file.adviseWillNeed()
    self.directory = directory
    self.configuration = configuration
    self.tokenizer = tokenizer
    self.modelID = modelID ?? "sentence-transformers/" + directory.lastPathComponent
    dimension = configuration.hiddenSize
    maxSequenceLength = configuration.maxSequenceLength
    var options = options
    options.maxTokensPerPass = max(options.maxTokensPerPass, configuration.maxSequenceLength)
    self.options = options
  }

  /// Loads the model the locator finds (`ENGRAM_MODEL_DIR`, else the cache folder).
  /// - Throws: `EmbeddingError.modelNotFound` whose description names `make test` / `ENGRAM_MODEL_DIR`.
  public convenience init(
    locator: ModelLocator = ModelLocator(), threads: Int = ProcessInfo.processInfo.activeProcessorCount
  ) throws(EmbeddingError) {
    try self.init(directory: try locator.locate(), options: Options(threads: threads))
  }

  /// Loads the model the locator finds to run with `options`.
  /// - Throws: `EmbeddingError.modelNotFound`, or `.invalidOption` (see `init(directory:modelID:options:)`).
  public convenience init(locator: ModelLocator = ModelLocator(), options: Options) throws(EmbeddingError) {
    try self.init(directory: try locator.locate(), options: options)
  }

  /// Embeds `texts` (see `embedSynchronously`).
  public func embed(_ texts: [String]) async throws -> [[Float]] {
    // The forward pass blocks a thread for milliseconds to seconds: off the cooperative pool.
    await BlockingWork.run { [self] in embedSynchronously(texts) }
  }

  /// Embeds `texts` on the calling thread: one unit vector of `dimension` floats per text, in order.
  ///
  /// Texts longer than `maxSequenceLength` tokens are truncated, as sentence-transformers does.
  /// - Complexity: linear in the total number of tokens, plus the square of each text's length.
  public func embedSynchronously(_ texts: [String]) -> [[Float]] {
    run(BertModel.map(texts, threads: options.threads) { [tokenizer] in tokenizer.encode($0) })
  }

  /// Embeds already tokenized sequences (each with its own `[CLS]` … `[SEP]`).
  /// - Throws: `.invalidTokenID`, `.sequenceTooLong`, or `.emptyInput` for an empty sequence.
  public func embed(tokenIDs sequences: [[Int32]]) throws(EmbeddingError) -> [[Float]] {
    for (index, sequence) in sequences.enumerated() {
      guard !sequence.isEmpty else { throw .emptyInput(index: index) }
      guard sequence.count <= maxSequenceLength else {
        throw .sequenceTooLong(length: sequence.count, maximum: maxSequenceLength, index: index)
      }
      if let bad = sequence.first(where: { $0 < 0 || Int($0) >= configuration.vocabularySize }) {
        throw .invalidTokenID(id: bad, index: index)
      }
    }
    return run(sequences)
  }

  /// Runs sequences on `BertModel.vectors(_:threads:normalizes:maxTokens:)` in passes of at
  /// most `maxTokensPerPass` tokens (one call at a time).
  private func run(_ sequences: [[Int32]]) -> [[Float]] {
    forward.withLock { _ in
      // Every product splits its own work across `threads`; OpenBLAS's pool would nest.
      #if !canImport(Accelerate)
        openblas_set_num_threads(1)
      #endif
      return model.vectors(sequences, threads: threads, normalizes: true, maxTokens: maxTokensPerPass)
    }
  }
}
