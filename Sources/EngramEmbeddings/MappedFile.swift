import Foundation

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// A read-only memory map of a whole file, unmapped in `deinit`.
///
/// The pages are never written, so reading them from several threads is safe; the owner
/// decides whether to share it (see `BertModel`).
final class MappedFile {
  /// The mapped path.
  let path: String
  /// The first byte of the mapping.
  let base: UnsafeRawPointer
  /// The file size in bytes.
  let count: Int

  /// Maps `path` read-only.
  /// - Throws: `EmbeddingError.modelNotFound` when absent, `.modelFileUnreadable` otherwise.
  init(path: String) throws(EmbeddingError) {
    self.path = path
    let descriptor = open(path, O_RDONLY)
    guard descriptor >= 0 else {
      let code = errno
      if code == ENOENT {
        let url = URL(fileURLWithPath: path)
        throw .modelNotFound(
          directory: url.deletingLastPathComponent().path, missingFile: url.lastPathComponent)
      }
      throw .modelFileUnreadable(path: path, reason: String(cString: strerror(code)))
    }
    defer { close(descriptor) }
    var info = stat()
    guard fstat(descriptor, &info) == 0 else {
      throw .modelFileUnreadable(path: path, reason: String(cString: strerror(errno)))
    }
    let size = Int(info.st_size)
    guard size > 0 else { throw .invalidSafetensors(path: path, reason: "the file is empty") }
    guard let mapping = mmap(nil, size, PROT_READ, MAP_PRIVATE, descriptor, 0), mapping != MAP_FAILED else {
      throw .modelFileUnreadable(path: path, reason: "mmap: " + String(cString: strerror(errno)))
    }
    base = UnsafeRawPointer(mapping)
    count = size
  }

  /// Asks the kernel to read the pages ahead, so the first inference does not fault them one by one.
  func adviseWillNeed() {
    _ = madvise(UnsafeMutableRawPointer(mutating: base), count, Int32(MADV_WILLNEED))
  }

  deinit {
    munmap(UnsafeMutableRawPointer(mutating: base), count)
  }
}
