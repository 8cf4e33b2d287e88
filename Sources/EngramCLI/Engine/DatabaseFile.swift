import Engram
import Foundation

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// What is at the database path before anything opens it, checked without following a link
/// and without opening the file (a FIFO would block an open).
///
/// The rules (docs/files.md): a symbolic link at the path is refused by every command (a link
/// planted there would send the memory, its snapshot and its temporary files elsewhere);
/// anything but a regular file is refused; an empty file is refused (SQLite would silently
/// turn it into a new memory); read commands never create a file. `init` creates the file
/// itself, exclusively and with mode 0600, before SQLite sees it.
public enum DatabaseFile {
  /// What the path holds.
  public enum State: Sendable, Equatable {
    /// Nothing: a memory may be created there.
    case absent
    /// A database server's URI (`postgresql://...`) whose database holds Engram's schema (no
    /// file to inspect; the store itself says whether it can be reached).
    case server
    /// A regular, non-empty file of `size` bytes.
    case file(size: Int)
  }

  /// Inspects `path` with `lstat`.
  /// - Throws: `CommandFailure` for a symbolic link, a non-regular file, an empty file or a
  ///   path that cannot be inspected.
  public static func inspect(_ path: String, toolName: String = "engram") throws -> State {
    // A server's database: no file to check; a memory exists once it holds the schema.
    if StoreLocation.isURI(path) { return try MemoryEngine.memoryExists(at: path) ? .server : .absent }
    var status = stat()
    guard lstat(path, &status) == 0 else {
      let code = errno
      if code == ENOENT { return .absent }
      if code == ENOTDIR { throw CommandFailure("\(path): a part of the path is not a folder") }
      if code == EACCES { throw CommandFailure("\(path): permission denied on a folder of the path") }
      throw CommandFailure("\(path): cannot inspect the path (\(String(cString: strerror(code))))")
    }
    switch status.st_mode & S_IFMT {
    case S_IFREG: break
    case S_IFLNK:
      throw CommandFailure(
        "\(path) is a symbolic link; \(toolName) does not follow links at the database path "
          + "(give the real file with --db)")
    case S_IFDIR:
      throw CommandFailure("\(path) is a folder, not a regular file; give the memory file with --db")
    case S_IFIFO: throw CommandFailure("\(path) is a FIFO, not a regular file; it is not an Engram memory")
    case S_IFSOCK: throw CommandFailure("\(path) is a socket, not a regular file; it is not an Engram memory")
    default: throw CommandFailure("\(path) is a device, not a regular file; it is not an Engram memory")
    }
    guard status.st_size > 0 else {
      throw CommandFailure(
        "\(path) is an empty file (0 bytes), not an Engram memory; nothing was changed "
          + "(remove it, then create a memory with `\(toolName) init --db \(path)`)")
    }
    return .file(size: Int(status.st_size))
  }

  /// Creates an empty database file at `path` with mode 0600, exclusively: fails when
  /// anything (even a dangling link) is already there, and never follows a link.
  public static func createExclusively(_ path: String) throws {
    // A server's database is not a file: opening it creates the schema.
    if StoreLocation.isURI(path) { return }
    let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
    guard descriptor >= 0 else {
      let code = errno
      if code == EEXIST {
        throw CommandFailure("\(path) appeared while the memory was being created; nothing was changed")
      }
      if code == ENOENT { throw CommandFailure("\(path): no such folder") }
      if code == EACCES { throw CommandFailure("\(path): permission denied (cannot create the file there)") }
      throw CommandFailure("\(path): cannot create the file (\(String(cString: strerror(code))))")
    }
    // The umask may have narrowed the mode, never widened it; make it exactly 0600.
    _ = fchmod(descriptor, 0o600)
    close(descriptor)
  }

  /// Why SQLite finds the file damaged, when the header tells: the file is shorter than the
  /// size its header records. Returns nil when the header does not say.
  public static func truncation(_ path: String) -> (actual: Int, expected: Int)? {
    guard let handle = FileHandle(forReadingAtPath: path) else { return nil }
    defer { try? handle.close() }
    guard let header = try? handle.read(upToCount: 100), header.count == 100,
      header.starts(with: Array("SQLite format 3\0".utf8)),
      let size = try? handle.seekToEnd()
    else { return nil }
    let bytes = [UInt8](header)
    func bigEndian(_ offset: Int, _ count: Int) -> Int {
      bytes[offset..<(offset + count)].reduce(0) { $0 << 8 | Int($1) }
    }
    let rawPageSize = bigEndian(16, 2)
    let pageSize = rawPageSize == 1 ? 65_536 : rawPageSize
    let pages = bigEndian(28, 4)
    // The in-header size is valid only when its change counter matches (SQLite's rule).
    guard pageSize >= 512, pages > 0, bigEndian(24, 4) == bigEndian(92, 4) else { return nil }
    let expected = pageSize * pages
    return Int(size) < expected ? (Int(size), expected) : nil
  }
}
