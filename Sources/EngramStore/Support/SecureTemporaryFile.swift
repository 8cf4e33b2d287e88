import Foundation

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// A private temporary file beside its destination, renamed into place once complete.
///
/// The name is unpredictable (`.<name>.tmp-<16 random hex digits>`) and the file is
/// created exclusively (`O_CREAT|O_EXCL|O_NOFOLLOW|O_CLOEXEC`) with mode 0600 from the
/// start, so a link planted at a guessed name is never followed and the data is never
/// readable by others, not even for a moment. Dropped without `commit`, the file is removed.
///
/// Owns its descriptor; not `Sendable`.
public final class SecureTemporaryFile {
  /// Why a temporary file could not be created, written or put in place.
  public struct Failure: Error, Sendable, Hashable, CustomStringConvertible {
    /// What was being done: `create`, `write`, `sync` or `rename`.
    public var operation: String
    /// The file concerned (the destination for `rename`).
    public var path: String
    /// The `errno` value.
    public var code: Int32

    /// One line for a person.
    public var description: String {
      "cannot \(operation) \(path): \(String(cString: strerror(code)))"
    }
  }

  /// The temporary file's path.
  public let path: String
  /// Where `commit` puts it.
  public let destination: String
  private var descriptor: Int32

  /// Creates the temporary file in the folder of `destination`.
  /// - Throws: `Failure` (`create`).
  public init(destination: String) throws(Failure) {
    let url = URL(fileURLWithPath: destination)
    let folder = url.deletingLastPathComponent().path
    let name = url.lastPathComponent
    var generator = SystemRandomNumberGenerator()
    var attempt = 0
    while true {
      let suffix = String(generator.next() as UInt64, radix: 16)
      let candidate =
        folder + "/." + name + ".tmp-" + String(repeating: "0", count: 16 - suffix.count) + suffix
      let descriptor = open(candidate, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
      if descriptor >= 0 {
        self.path = candidate
        self.destination = destination
        self.descriptor = descriptor
        return
      }
      let code = errno
      attempt += 1
      guard code == EEXIST || code == EINTR, attempt < 16 else {
        throw Failure(operation: "create a temporary file beside", path: destination, code: code)
      }
    }
  }

  deinit {
    if descriptor >= 0 {
      close(descriptor)
      unlink(path)
    }
  }

  /// Writes all of `bytes`, retrying short writes and interruptions.
  /// - Throws: `Failure` (`write`).
  public func write(_ bytes: UnsafeRawBufferPointer) throws(Failure) {
    guard var base = bytes.baseAddress, descriptor >= 0 else { return }
    var remaining = bytes.count
    while remaining > 0 {
      let written = Foundation.write(descriptor, base, remaining)
      if written < 0 {
        if errno == EINTR { continue }
        throw Failure(operation: "write", path: path, code: errno)
      }
      remaining -= written
      base += written
    }
  }

  /// Flushes the file to disk, closes it and renames it to the destination (replacing
  /// what is there, a symbolic link included, without following it).
  /// - Throws: `Failure` (`sync`, `rename`); the temporary file is removed then.
  public func commit() throws(Failure) {
    guard descriptor >= 0 else { return }
    if fsync(descriptor) != 0 {
      throw Failure(operation: "sync", path: path, code: errno)
    }
    close(descriptor)
    descriptor = -1
    if rename(path, destination) != 0 {
      let code = errno
      unlink(path)
      throw Failure(operation: "rename a temporary file to", path: destination, code: code)
    }
  }
}
