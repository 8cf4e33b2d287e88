import Foundation

/// A temporary folder removed when the value is released.
public final class ScratchFolder {
  /// The folder.
  public let url: URL

  /// Creates a new, empty folder under the temporary directory.
  public init() throws {
    url = FileManager.default.temporaryDirectory.appendingPathComponent("engram-cli-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
  }

  deinit {
    try? FileManager.default.removeItem(at: url)
  }

  /// The path of `name` inside the folder.
  public func path(_ name: String) -> String { url.appendingPathComponent(name).path }

  /// Writes `text` to `name` and returns its path.
  @discardableResult
  public func write(_ name: String, _ text: String) throws -> String {
    try Data(text.utf8).write(to: url.appendingPathComponent(name))
    return path(name)
  }
}
