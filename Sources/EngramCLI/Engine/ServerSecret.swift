import EngramHTTP
import Foundation

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// The secrets a local server is given in files: the secret of a launch (`--token-file`,
/// created 0600 when missing) and the users file (`--users`). A file that other users can
/// change (or, for a secret, read) is refused with a sentence, as SSH refuses such keys.
enum ServerSecret {
  /// A new secret: 256 bits from the system's cryptographic generator, as 64 hex digits.
  static func fresh() -> String { StreamableHTTPHandler.newSessionID() }

  /// The secret in `path`, or a new one written there (mode 0600) when the file is missing.
  /// - Throws: ``CommandFailure`` when the file is open to other users, not the caller's,
  ///   unreadable, or does not hold one token of at least 16 visible characters.
  static func load(path: String) throws -> String {
    let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, 0o600)
    if descriptor >= 0 {
      let secret = fresh()
      let bytes = Array((secret + "\n").utf8)
      let written = bytes.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
      let synced = fsync(descriptor) == 0
      close(descriptor)
      guard written == bytes.count, synced else {
        unlink(path)
        throw CommandFailure("\(path): cannot write the token file")
      }
      return secret
    }
    guard errno == EEXIST else {
      throw CommandFailure("\(path): cannot create the token file (\(String(cString: strerror(errno))))")
    }
    try checkPrivate(path: path, what: "the token file", refuseReadable: true)
    guard let data = FileManager.default.contents(atPath: path) else {
      throw CommandFailure("\(path): cannot read the token file")
    }
    let secret = String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    guard secret.count >= HTTPTransportConfiguration.minimumTokenLength,
      secret.unicodeScalars.allSatisfy({
        $0.value > 32 && $0.value < 127 && !";,\"\\".unicodeScalars.contains($0)
      })
    else {
      throw CommandFailure(
        "\(path): the token file must hold one token of at least "
          + "\(HTTPTransportConfiguration.minimumTokenLength) visible ASCII characters (no spaces, ';', ',', "
          + "quotes or backslashes); delete it to have a new one made")
    }
    return secret
  }

  /// Refuses a file other users could change (or, with `refuseReadable`, read), or that
  /// belongs to someone else.
  /// - Throws: ``CommandFailure`` naming the fix.
  static func checkPrivate(path: String, what: String, refuseReadable: Bool) throws {
    var status = stat()
    guard stat(path, &status) == 0 else {
      throw CommandFailure("\(path): cannot read \(what) (\(String(cString: strerror(errno))))")
    }
    let mode = Int(status.st_mode) & 0o777
    let open = mode & (refuseReadable ? 0o077 : 0o022)
    let octal = String(mode, radix: 8)
    if open != 0 {
      let could = refuseReadable ? "read or change" : "change"
      throw CommandFailure(
        "\(path): other users can \(could) \(what) (mode \(octal)), so it is not used; "
          + "run chmod 600 \(path)")
    }
    if status.st_uid != geteuid() {
      throw CommandFailure("\(path): \(what) belongs to another user, so it is not used")
    }
  }
}
