import CEngramKernels
import Foundation

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// What `VectorIndex.verifyLists(snapshot:expectedToken:dimension:)` found beside a snapshot.
public enum ListsFileState: Sendable, Hashable {
  /// No `<snapshot>.lists` file (the snapshot was written without lists).
  case absent
  /// The lists belong to the snapshot and every byte passed its checksum.
  case verified(lists: Int, rows: Int)
  /// Intact lists of another snapshot (a crash between the two renames): never used.
  case stale
  /// Unreadable, or failing a check: `reason` says which (the header, or the stamp of the
  /// snapshot's rows, layout and checksums). Never used: an open ignores them.
  case damaged(reason: String)
}

extension VectorIndex {
  /// Checks the approximate tier's lists beside `snapshot` as `doctor` does: the header
  /// (magic, version, header checksum), the stamp naming the snapshot (its token and
  /// row-table checksum), the layout and every byte's checksum.
  ///
  /// - Throws: what `verifySnapshot` throws when the snapshot itself is not current or not
  ///   intact (its lists are then not checked).
  /// - Complexity: O(n · dimension): every byte of the snapshot and of the lists is read.
  public static func verifyLists(snapshot url: URL, expectedToken: UInt64, dimension: Int)
    throws(VectorIndexError) -> ListsFileState
  {
    let index = try open(
      snapshot: url, expectedToken: expectedToken,
      configuration: Configuration(dimension: dimension, approximate: ApproximateConfiguration()),
      verification: .full, rowSource: nil, requireSource: false)
    if let status = index.approximateStatus { return .verified(lists: status.lists, rows: index.count) }
    // The open refused or found no lists: read the header alone to say why.
    let path = ListsFormat.path(url)
    let descriptor = SnapshotIO.openFile(path, O_RDONLY | O_CLOEXEC)
    guard descriptor >= 0 else {
      return errno == ENOENT ? .absent : .damaged(reason: "unreadable (errno \(errno))")
    }
    defer { close(descriptor) }
    var header = [UInt8](repeating: 0, count: ListsFormat.headerBytes)
    guard
      header.withUnsafeMutableBytes({ SnapshotIO.readAll(descriptor, $0.baseAddress!, $0.count, offset: 0) })
        == 0
    else { return .damaged(reason: "shorter than its header") }
    let token = header.withUnsafeBytes {
      UInt64(littleEndian: $0.loadUnaligned(fromByteOffset: 32, as: UInt64.self))
    }
    let recorded = header.withUnsafeBytes {
      UInt64(littleEndian: $0.loadUnaligned(fromByteOffset: 120, as: UInt64.self))
    }
    let version = header.withUnsafeBytes {
      UInt32(littleEndian: $0.loadUnaligned(fromByteOffset: 8, as: UInt32.self))
    }
    guard Array(header[0..<8]) == ListsFormat.magic, version == ListsFormat.version,
      header.withUnsafeBytes({ engram_checksum64($0.baseAddress, 120, ListsFormat.headerSeed) }) == recorded
    else { return .damaged(reason: "header") }
    guard token == expectedToken else { return .stale }
    return .damaged(reason: "rows, layout or checksum")
  }
}
