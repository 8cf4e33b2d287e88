import Foundation

/// One file of the web app, shipped inside the binary.
struct WebAsset: Sendable {
  /// The `Content-Type` it is served with.
  let contentType: String
  /// Its bytes.
  let body: Data
  /// A strong validator of its bytes (`"` FNV-1a 64 hex `"`), sent as `ETag`.
  let etag: String

  /// A text file; the generated literal drops the file's final newline, which is put back.
  init(contentType: String, text: String) {
    self.contentType = contentType
    body = Data((text + "\n").utf8)
    var hash: UInt64 = 0xcbf2_9ce4_8422_2325
    for byte in body {
      hash = (hash ^ UInt64(byte)) &* 0x0100_0000_01b3
    }
    etag = "\"" + String(hash, radix: 16) + "\""
  }
}

/// The web app's files (`Sources/EngramCLI/Web/assets`, compiled into
/// `WebAssets+Generated.swift` by `make web`).
enum WebAssets {
  /// The file served at `path` (`/` is `index.html`), or nil.
  static func asset(at path: String) -> WebAsset? {
    let name = path == "/" ? "index.html" : String(path.dropFirst())
    guard !name.contains("/") else { return nil }
    return generated[name]
  }
}
