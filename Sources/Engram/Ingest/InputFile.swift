import Foundation

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// Reads a whole input file the way a shell user means it: `-` is standard input, and a FIFO,
/// a pipe (`<(...)`, `/dev/fd/N`) or a device is read to its end like a file. A folder is
/// refused with a sentence, as are the usual open errors (Foundation on Linux reports some of
/// them as "You don't have permission" or `NSCocoaErrorDomain error 256`).
public enum InputFile {
  /// The bytes of `path` (`-`: standard input).
  /// - Throws: `ImportError.unreadable` with a reason a person reads.
  public static func readAll(_ path: String) throws(ImportError) -> Data {
    let descriptor: Int32
    if path == "-" {
      descriptor = 0
    } else {
      try refuseFolder(path)
      descriptor = open(path, O_RDONLY | O_CLOEXEC)
      guard descriptor >= 0 else { throw .unreadable(path: path, reason: reason(errno)) }
    }
    defer { if descriptor != 0 { close(descriptor) } }
    var data = Data()
    var buffer = [UInt8](repeating: 0, count: 1 << 16)
    while true {
      let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
      if count == 0 { return data }
      if count < 0 {
        if errno == EINTR { continue }
        throw .unreadable(path: path, reason: reason(errno))
      }
      data.append(contentsOf: buffer[0..<count])
    }
  }

  /// Throws when `path` is a folder.
  /// - Throws: `ImportError.unreadable` ("it is a folder ...").
  public static func refuseFolder(_ path: String) throws(ImportError) {
    var status = stat()
    if path != "-", stat(path, &status) == 0, status.st_mode & S_IFMT == S_IFDIR {
      throw .unreadable(path: path, reason: "it is a folder, not a file")
    }
  }

  /// Whether `path` is a folder.
  public static func isFolder(_ path: String) -> Bool {
    var status = stat()
    return path != "-" && stat(path, &status) == 0 && status.st_mode & S_IFMT == S_IFDIR
  }

  /// Whether `path` is a regular file (not standard input, a FIFO, a pipe or a device), so it
  /// can be read twice.
  public static func isRegularFile(_ path: String) -> Bool {
    var status = stat()
    return path != "-" && stat(path, &status) == 0 && status.st_mode & S_IFMT == S_IFREG
  }

  /// A sentence's end for an `errno` of open or read.
  static func reason(_ code: Int32) -> String {
    switch code {
    case ENOENT: return "no such file"
    case EACCES, EPERM: return "permission denied"
    case EISDIR: return "it is a folder"
    case ENOTDIR: return "a part of the path is not a folder"
    default: return String(cString: strerror(code)).lowercased()
    }
  }
}
