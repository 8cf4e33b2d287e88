import CEngramKernels
import Foundation

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// Snapshot file layout (little-endian), version 1:
///
///     0  magic "ENGRVEC\0"      8  version u32    12  dimension u32
///    16  row count u64          24  token u64     32  payload bytes u64
///    40  payload checksum u64   48  reserved (16 zero bytes)
///    64  payload: ids i64[n], sessions i64[n], scopes i64[n], timestamps i64[n],
///        kinds u8[n] padded to 8 bytes, vectors f32[n * dimension]
///
/// Only live rows are written. int8 codes are recomputed on open, so the format does not
/// depend on the quantization scheme.
enum SnapshotFormat {
  static let magic: [UInt8] = Array("ENGRVEC".utf8) + [0]
  static let version: UInt32 = 1
  static let headerBytes = 64

  static func payloadBytes(count: Int, dimension: Int) -> Int {
    count * 32 + ((count + 7) & ~7) + count * dimension * 4
  }

  static func seed(dimension: Int, count: Int, token: UInt64) -> UInt64 {
    token ^ (UInt64(dimension) << 40) ^ UInt64(count)
  }
}

extension VectorIndex {
  /// Writes the live rows to `url` atomically (temporary file, fsync, rename), stamped with
  /// `token` (e.g. the store's data version) so a later `open` can tell whether it is stale.
  /// - Throws: `.snapshotIO` with the path and errno.
  /// - Complexity: O(live · dimension).
  public func write(snapshotTo url: URL, token: UInt64) throws(VectorIndexError) {
    var version = snapshot()
    if version.count != version.live { version = version.compacted(capacity: version.live) }
    let rows = version.rows
    let n = version.count
    let dimension = self.dimension
    let padded = (n + 7) & ~7
    let kinds = UnsafeMutablePointer<UInt8>.allocate(capacity: max(padded, 1))
    defer { kinds.deallocate() }
    kinds.initialize(repeating: 0, count: max(padded, 1))
    kinds.update(from: rows.kinds, count: n)
    let columns: [(UnsafeRawPointer, Int)] = [
      (UnsafeRawPointer(rows.ids), n * 8), (UnsafeRawPointer(rows.sessions), n * 8),
      (UnsafeRawPointer(rows.scopes), n * 8), (UnsafeRawPointer(rows.timestamps), n * 8),
      (UnsafeRawPointer(kinds), padded), (UnsafeRawPointer(rows.vectors), n * dimension * 4),
    ]
    var checksum = SnapshotFormat.seed(dimension: dimension, count: n, token: token)
    for (pointer, length) in columns { checksum = engram_checksum64(pointer, length, checksum) }

    var header = [UInt8](repeating: 0, count: SnapshotFormat.headerBytes)
    header.replaceSubrange(0..<8, with: SnapshotFormat.magic)
    func put<T: FixedWidthInteger>(_ value: T, at offset: Int) {
      withUnsafeBytes(of: value.littleEndian) {
        header.replaceSubrange(offset..<(offset + $0.count), with: $0)
      }
    }
    put(SnapshotFormat.version, at: 8)
    put(UInt32(dimension), at: 12)
    put(UInt64(n), at: 16)
    put(token, at: 24)
    put(UInt64(SnapshotFormat.payloadBytes(count: n, dimension: dimension)), at: 32)
    put(checksum, at: 40)

    let path = url.path
    let temporary = path + ".tmp-\(getpid())"
    let descriptor = SnapshotIO.openFile(temporary, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
    guard descriptor >= 0 else { throw .snapshotIO(path: temporary, errno: errno) }
    var failure: Int32 = 0
    header.withUnsafeBytes { failure = SnapshotIO.writeAll(descriptor, $0.baseAddress!, $0.count) }
    for (pointer, length) in columns where failure == 0 {
      failure = SnapshotIO.writeAll(descriptor, pointer, length)
    }
    if failure == 0, fsync(descriptor) != 0 { failure = errno }
    close(descriptor)
    if failure == 0, rename(temporary, path) != 0 { failure = errno }
    if failure != 0 {
      unlink(temporary)
      throw .snapshotIO(path: path, errno: failure)
    }
  }

  /// Opens a snapshot written by `write(snapshotTo:token:)`.
  ///
  /// - Parameters:
  ///   - url: the snapshot file.
  ///   - expectedToken: the token the store says is current.
  ///   - configuration: precision, threads etc. for the new index; its dimension must match
  ///     the file. Nil takes the file's dimension and default settings.
  /// - Throws: `.snapshotIO` (missing, unreadable), `.snapshotCorrupt` (magic, version,
  ///   length, checksum, rows), `.snapshotStale` (token differs),
  ///   `.snapshotDimensionMismatch`. Rebuild from the store on any of these.
  /// - Complexity: O(n · dimension): one read and one checksum pass.
  public static func open(snapshot url: URL, expectedToken: UInt64, configuration: Configuration? = nil)
    throws(VectorIndexError) -> VectorIndex
  {
    let path = url.path
    let descriptor = SnapshotIO.openFile(path, O_RDONLY)
    guard descriptor >= 0 else { throw .snapshotIO(path: path, errno: errno) }
    defer { close(descriptor) }
    var status = stat()
    guard fstat(descriptor, &status) == 0 else { throw .snapshotIO(path: path, errno: errno) }
    let fileBytes = Int(status.st_size)
    guard fileBytes >= SnapshotFormat.headerBytes else {
      throw .snapshotCorrupt(
        path: path, reason: .lengthMismatch(expected: SnapshotFormat.headerBytes, actual: fileBytes))
    }
    var header = [UInt8](repeating: 0, count: SnapshotFormat.headerBytes)
    let headerError = header.withUnsafeMutableBytes {
      SnapshotIO.readAll(descriptor, $0.baseAddress!, $0.count, offset: 0)
    }
    guard headerError == 0 else { throw .snapshotIO(path: path, errno: headerError) }
    func get<T: FixedWidthInteger>(_ type: T.Type, at offset: Int) -> T {
      header.withUnsafeBytes { T(littleEndian: $0.loadUnaligned(fromByteOffset: offset, as: T.self)) }
    }
    guard Array(header[0..<8]) == SnapshotFormat.magic else {
      throw .snapshotCorrupt(path: path, reason: .badMagic)
    }
    let formatVersion = get(UInt32.self, at: 8)
    guard formatVersion == SnapshotFormat.version else {
      throw .snapshotCorrupt(path: path, reason: .unsupportedVersion(formatVersion))
    }
    let dimension = Int(get(UInt32.self, at: 12))
    let rawCount = get(UInt64.self, at: 16)
    let token = get(UInt64.self, at: 24)
    let payload = get(UInt64.self, at: 32)
    let checksum = get(UInt64.self, at: 40)
    guard dimension > 0, dimension <= 65_536, rawCount < UInt64(Int32.max) else {
      throw .snapshotCorrupt(path: path, reason: .invalidHeader)
    }
    let n = Int(rawCount)
    let expectedPayload = SnapshotFormat.payloadBytes(count: n, dimension: dimension)
    guard payload == UInt64(expectedPayload) else {
      throw .snapshotCorrupt(path: path, reason: .invalidHeader)
    }
    guard fileBytes == SnapshotFormat.headerBytes + expectedPayload else {
      throw .snapshotCorrupt(
        path: path,
        reason: .lengthMismatch(expected: SnapshotFormat.headerBytes + expectedPayload, actual: fileBytes))
    }
    guard token == expectedToken else {
      throw .snapshotStale(path: path, expected: expectedToken, found: token)
    }
    var configuration = configuration ?? Configuration(dimension: dimension)
    guard configuration.dimension == dimension else {
      throw .snapshotDimensionMismatch(path: path, expected: configuration.dimension, found: dimension)
    }
    configuration.initialCapacity = max(configuration.initialCapacity, n)
    try configuration.validate()

    let rows = RowStore(
      dimension: dimension, capacity: configuration.initialCapacity,
      quantized: configuration.precision == .int8)
    let padded = (n + 7) & ~7
    let kinds = UnsafeMutablePointer<UInt8>.allocate(capacity: max(padded, 1))
    defer { kinds.deallocate() }
    let columns: [(UnsafeMutableRawPointer, Int)] = [
      (UnsafeMutableRawPointer(rows.ids), n * 8), (UnsafeMutableRawPointer(rows.sessions), n * 8),
      (UnsafeMutableRawPointer(rows.scopes), n * 8), (UnsafeMutableRawPointer(rows.timestamps), n * 8),
      (UnsafeMutableRawPointer(kinds), padded), (UnsafeMutableRawPointer(rows.vectors), n * dimension * 4),
    ]
    var offset = SnapshotFormat.headerBytes
    var computed = SnapshotFormat.seed(dimension: dimension, count: n, token: token)
    for (pointer, length) in columns {
      let failure = SnapshotIO.readAll(descriptor, pointer, length, offset: offset)
      guard failure == 0 else { throw .snapshotIO(path: path, errno: failure) }
      computed = engram_checksum64(pointer, length, computed)
      offset += length
    }
    guard computed == checksum else { throw .snapshotCorrupt(path: path, reason: .checksumMismatch) }
    rows.kinds.update(from: kinds, count: n)

    var version = IndexVersion(rows: rows)
    var seen = Set<Int64>(minimumCapacity: n)
    for row in 0..<n {
      guard let kind = VectorKind(rawValue: rows.kinds[row]), seen.insert(rows.ids[row]).inserted else {
        throw .snapshotCorrupt(path: path, reason: .invalidRow(index: row))
      }
      version.appendRow(
        id: rows.ids[row],
        metadata: VectorMetadata(
          kind: kind, session: rows.sessions[row], scope: rows.scopes[row], timestamp: rows.timestamps[row]))
    }
    rows.quantize(range: 0..<n)
    return VectorIndex(configuration: configuration, version: version)
  }
}

/// Whole-buffer POSIX reads and writes that retry short transfers and EINTR.
enum SnapshotIO {
  // Qualified because `VectorIndex.open` / `write` shadow the C functions in extensions.
  static func openFile(_ path: String, _ flags: Int32, _ mode: mode_t = 0) -> Int32 {
    #if canImport(Glibc)
      return Glibc.open(path, flags, mode)
    #else
      return Darwin.open(path, flags, mode)
    #endif
  }

  static func systemWrite(_ descriptor: Int32, _ pointer: UnsafeRawPointer, _ length: Int) -> Int {
    #if canImport(Glibc)
      return Glibc.write(descriptor, pointer, length)
    #else
      return Darwin.write(descriptor, pointer, length)
    #endif
  }

  /// Returns 0 or an errno.
  static func writeAll(_ descriptor: Int32, _ pointer: UnsafeRawPointer, _ length: Int) -> Int32 {
    var done = 0
    while done < length {
      let written = SnapshotIO.systemWrite(descriptor, pointer + done, min(length - done, 1 << 30))
      if written < 0 {
        if errno == EINTR { continue }
        return errno
      }
      done += written
    }
    return 0
  }

  /// Returns 0, an errno, or EIO when the file ends early.
  static func readAll(_ descriptor: Int32, _ pointer: UnsafeMutableRawPointer, _ length: Int, offset: Int)
    -> Int32
  {
    var done = 0
    while done < length {
      let got = pread(descriptor, pointer + done, min(length - done, 1 << 30), off_t(offset + done))
      if got < 0 {
        if errno == EINTR { continue }
        return errno
      }
      if got == 0 { return EIO }
      done += got
    }
    return 0
  }
}
