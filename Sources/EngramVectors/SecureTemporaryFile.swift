#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// A temporary file beside a destination, created the safe way: an unpredictable name,
/// created exclusively (`O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC`) with mode 0600 from the
/// start, so a symlink or file planted at a guessable name is never followed, truncated or
/// left readable by others. Write through `descriptor`, then `commit()` renames it over the
/// destination; `discard()` (or a failed commit, or release without commit) removes it.
/// Not `Sendable`: it owns its descriptor.
///
/// Every temporary file Engram writes (vector snapshots, exports) goes through this type.
public final class SecureTemporaryFile {
  /// The open descriptor (write-only).
  public let descriptor: Int32
  /// The temporary file's path.
  public let path: String
  /// The file `commit()` replaces.
  public let destination: String
  private var open = true

  /// Creates a new temporary file in the folder of `destination`, named
  /// `<destination>.tmp-<16 random hex digits>`.
  /// - Throws: `SecureTemporaryFile.Failure` with the errno (after a few name collisions,
  ///   `EEXIST`).
  public init(beside destination: String) throws(Failure) {
    var attempt = 0
    while true {
      var random = SystemRandomNumberGenerator()
      let suffix = String(random.next() as UInt64, radix: 16)
      let candidate = destination + ".tmp-" + String(repeating: "0", count: 16 - suffix.count) + suffix
      let flags = O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC
      let descriptor = SnapshotIO.openFile(candidate, flags, 0o600)
      if descriptor >= 0 {
        // The umask can only remove bits; make sure nothing else was granted either.
        _ = fchmod(descriptor, 0o600)
        self.descriptor = descriptor
        self.path = candidate
        self.destination = destination
        return
      }
      let code = errno
      attempt += 1
      guard code == EEXIST || code == EINTR, attempt < 8 else {
        throw Failure(path: candidate, errno: code)
      }
    }
  }

  /// Why a temporary file could not be created, written or committed.
  public struct Failure: Error, Sendable, Equatable, CustomStringConvertible {
    /// The file concerned.
    public var path: String
    /// The C library's error number.
    public var errno: Int32

    /// One line for a person.
    public var description: String { "cannot write \(path): \(String(cString: strerror(errno)))" }
  }

  /// Writes all of `length` bytes at `pointer`, retrying short writes.
  /// - Throws: `Failure` with the errno.
  public func write(_ pointer: UnsafeRawPointer, count length: Int) throws(Failure) {
    let code = SnapshotIO.writeAll(descriptor, pointer, length)
    if code != 0 { throw Failure(path: path, errno: code) }
  }

  /// Writes all of `bytes`, retrying short writes.
  /// - Throws: `Failure` with the errno.
  public func write(_ bytes: UnsafeRawBufferPointer) throws(Failure) {
    guard let base = bytes.baseAddress else { return }
    try write(base, count: bytes.count)
  }

  /// Flushes the file to disk, closes it and renames it over `destination` (atomic on one
  /// file system). On failure the temporary file is removed.
  /// - Throws: `Failure` with the errno.
  public func commit(synchronize: Bool = true) throws(Failure) {
    guard open else { throw Failure(path: path, errno: EBADF) }
    var failure: Int32 = 0
    if synchronize, fsync(descriptor) != 0 { failure = errno }
    if close(descriptor) != 0, failure == 0 { failure = errno }
    open = false
    if failure == 0, rename(path, destination) != 0 { failure = errno }
    if failure != 0 {
      unlink(path)
      throw Failure(path: destination, errno: failure)
    }
  }

  /// Closes and removes the temporary file.
  public func discard() {
    guard open else { return }
    close(descriptor)
    unlink(path)
    open = false
  }

  deinit {
    if open {
      close(descriptor)
      unlink(path)
    }
  }
}
