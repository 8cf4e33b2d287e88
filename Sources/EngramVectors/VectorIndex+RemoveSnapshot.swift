import Foundation

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

extension VectorIndex {
  /// Removes the snapshot file at `url` and the approximate lists beside it, if present.
  ///
  /// The lists go first: a snapshot without its lists is still a valid snapshot (the lists
  /// are rebuilt), and lists without their snapshot are never used, so a crash between
  /// the two removals leaves nothing that could be misread. An index mapped from the file
  /// keeps its pages (POSIX unlink semantics); the next open rebuilds from the store.
  /// - Throws: `.snapshotIO` when a file exists but cannot be removed.
  public static func removeSnapshot(at url: URL) throws(VectorIndexError) {
    for path in [ListsFormat.path(url), url.path] where unlink(path) != 0 && errno != ENOENT {
      throw .snapshotIO(path: path, errno: errno)
    }
  }
}
