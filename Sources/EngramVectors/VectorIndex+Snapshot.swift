import CEngramKernels
import Foundation

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// Snapshot file layout (little-endian), version 2 (`SnapshotContent.vectors`):
///
///     0  magic "ENGRVEC\0"      8  version u32    12  dimension u32
///    16  row count u64          24  token u64     32  file bytes u64
///    40  row-table checksum u64 48  vector checksum u64
///    56  header checksum u64 (of bytes 0..<56)
///    then, each column starting on a 4096-byte boundary: ids i64[n], sessions i64[n],
///    scopes i64[n], timestamps i64[n], kinds u8[n], vectors f32[n * dimension]
///
/// Version 3 (`SnapshotContent.codes`) holds what a search needs and no float32 row: the
/// same header, except bytes 32..<40 hold the codes' error bound (f32 bits, then 4 zero
/// bytes) and 48 the checksum of the codes, scales and sums; the same row table, then
/// codes i8[n * dimension], scales f32[n], code sums i32[n] (one scale per row, as
/// `VectorIndex+Int8` quantizes). An index opened from it re-ranks by reading the
/// candidates' float32 rows from its `FloatRowSource` (the store): a quarter of the bytes.
///
/// Only live rows are written, in ascending id order, so an opened snapshot finds a row by
/// binary search and needs no id map. The file is memory-mapped read-only, not read: an
/// open checks the header, the token and the row table (ids, metadata: 33 bytes a row), and
/// costs milliseconds whatever the size; the pages are shared by every process that maps
/// it. The payload's checksum (vectors, or codes, scales and sums) is checked before the
/// first read that trusts it (`SnapshotPayloadCheck`: the first search or snapshot write),
/// or at once by `verifySnapshot` (run by `doctor`).
/// Version 2 holds no codes: an int8 index opened from it quantizes the rows.
/// The approximate tier's lists live beside the snapshot (`ListsFormat`), so this format and
/// its readers are unchanged.
enum SnapshotFormat {
  static let magic: [UInt8] = Array("ENGRVEC".utf8) + [0]
  /// float32 rows.
  static let version: UInt32 = 2
  /// int8 codes, no float32 rows.
  static let codesVersion: UInt32 = 3
  static let headerBytes = 64
  static let alignment = 4096
  /// Vector rows checksummed per call (the writer and the verifier chain the same pieces).
  static let vectorChunkRows = 4096

  struct Layout {
    var ids = 0
    var sessions = 0
    var scopes = 0
    var timestamps = 0
    var kinds = 0
    var vectors = 0
    var codes = 0
    var scales = 0
    var sums = 0
    var total = 0
    /// Version 3: codes, scales and sums instead of vectors.
    var codesOnly = false
  }

  static func align(_ offset: Int) -> Int { (offset + alignment - 1) / alignment * alignment }

  static func layout(count n: Int, dimension: Int, codesOnly: Bool = false) -> Layout {
    var layout = Layout()
    layout.ids = alignment
    layout.sessions = align(layout.ids + n * 8)
    layout.scopes = align(layout.sessions + n * 8)
    layout.timestamps = align(layout.scopes + n * 8)
    layout.kinds = align(layout.timestamps + n * 8)
    layout.codesOnly = codesOnly
    if codesOnly {
      layout.codes = align(layout.kinds + n)
      layout.scales = align(layout.codes + n * dimension)
      layout.sums = align(layout.scales + n * 4)
      layout.total = layout.sums + n * 4
    } else {
      layout.vectors = align(layout.kinds + n)
      layout.total = layout.vectors + n * dimension * 4
    }
    return layout
  }

  /// The payload columns after the row table, as (offset, bytes per row), in file order.
  static func payload(_ layout: Layout, dimension: Int) -> [(offset: Int, width: Int)] {
    layout.codesOnly
      ? [(layout.codes, dimension), (layout.scales, 4), (layout.sums, 4)] : [(layout.vectors, 4 * dimension)]
  }

  /// The checksum of the payload (`verification: .full`), chained from the row table's, in
  /// the pieces the writer checksums: the first column `vectorChunkRows` rows at a time,
  /// the others whole.
  static func payloadChecksum(
    _ base: UnsafeRawPointer, _ layout: Layout, count n: Int, dimension: Int, seed: UInt64
  )
    -> UInt64
  {
    var checksum = seed
    for (index, column) in payload(layout, dimension: dimension).enumerated() {
      guard index == 0 else {
        // Whole, as the writer checksums them (an empty column too).
        checksum = engram_checksum64(base + column.offset, n * column.width, checksum)
        continue
      }
      let chunk = vectorChunkRows
      var start = 0
      while start < n {
        let count = min(chunk, n - start)
        checksum = engram_checksum64(
          base + column.offset + start * column.width, count * column.width, checksum)
        start += count
      }
    }
    return checksum
  }

  static func seed(dimension: Int, count: Int, token: UInt64) -> UInt64 {
    token ^ (UInt64(dimension) << 40) ^ UInt64(count)
  }

  /// The checksum of the header's first 56 bytes (stored in the last 8).
  static func headerChecksum(_ header: [UInt8]) -> UInt64 {
    header.withUnsafeBytes { engram_checksum64($0.baseAddress, 56, 0x454E_4752_5645_4332) }
  }
}

/// A read-only memory mapping of a snapshot file, unmapped when the last row store using
/// it goes away; optionally also its columns mapped with room for appended rows (see
/// `mapColumns`).
final class SnapshotMapping: @unchecked Sendable {
  let base: UnsafeRawPointer
  let length: Int
  /// Column regions made by `mapColumns` (ids, sessions, scopes, timestamps, kinds,
  /// then vectors, or codes, scales and sums), each with its length; empty when there are none.
  var columns: [(base: UnsafeMutableRawPointer, length: Int)] = []
  /// Rows the column regions hold room for (file rows included).
  var columnCapacity = 0

  init(base: UnsafeRawPointer, length: Int) {
    self.base = base
    self.length = length
  }

  deinit {
    munmap(UnsafeMutableRawPointer(mutating: base), length)
    for column in columns { munmap(column.base, column.length) }
  }
}

/// What a snapshot file holds besides the row table (ids and metadata).
public enum SnapshotContent: Sendable, Hashable {
  /// The unit float32 rows (format 2): the opened index holds every row it searches.
  case vectors
  /// int8 codes, their scales, code sums and error bound (format 3), no float32 row: a
  /// quarter of the bytes. The opened index searches by the codes with the int8 search's
  /// proof and reads the few float32 rows it re-ranks from a `FloatRowSource`.
  case codes
}

/// How much of a snapshot `open` checks.
public enum SnapshotVerification: Sendable, Hashable {
  /// Header, token and row table (ids and metadata): milliseconds for a million rows.
  case rowTable
  /// Also every vector's bytes (a read of the whole file).
  case full
}

extension VectorIndex {
  /// Writes the live rows to `url` atomically (a `SecureTemporaryFile`, fsync, rename),
  /// stamped with `token` (e.g. the store's data version) so a later `open` can tell
  /// whether it is stale.
  /// - Parameter content: float32 rows (the default) or int8 codes only; an index that
  ///   reads its float32 rows from a source (`readsFloatRowsFromSource`) writes codes.
  /// - Throws: `.snapshotIO` with the path and errno; `.snapshotCorrupt` when the index was
  ///   opened from a snapshot whose payload is damaged (its rows are not written again).
  /// - Complexity: O(live · dimension + live · log live) (rows are written in id order).
  public func write(snapshotTo url: URL, token: UInt64, content: SnapshotContent = .vectors)
    throws(VectorIndexError)
  {
    // Never re-stamps a damaged file's rows with a fresh checksum.
    let version = try trustedSnapshot()
    let rows = version.rows
    let dimension = self.dimension
    let codesOnly = content == .codes || rows.floatless > 0
    var order: [(id: Int64, row: Int32)] = []
    order.reserveCapacity(version.live)
    for row in 0..<version.count where !version.isDead(row) {
      order.append((rows.ids[row], Int32(row)))
    }
    order.sort { $0.id < $1.id }
    let n = order.count
    let layout = SnapshotFormat.layout(count: n, dimension: dimension, codesOnly: codesOnly)

    // The row table, gathered in id order.
    var ids = [Int64](repeating: 0, count: n)
    var sessions = [Int64](repeating: 0, count: n)
    var scopes = [Int64](repeating: 0, count: n)
    var timestamps = [Int64](repeating: 0, count: n)
    var kinds = [UInt8](repeating: 0, count: n)
    for (position, entry) in order.enumerated() {
      let row = Int(entry.row)
      ids[position] = entry.id
      sessions[position] = rows.sessions[row]
      scopes[position] = rows.scopes[row]
      timestamps[position] = rows.timestamps[row]
      kinds[position] = rows.kinds[row]
    }
    var rowChecksum = SnapshotFormat.seed(dimension: dimension, count: n, token: token)
    for column in [ids, sessions, scopes, timestamps] {
      rowChecksum = column.withUnsafeBytes { engram_checksum64($0.baseAddress, $0.count, rowChecksum) }
    }
    rowChecksum = kinds.withUnsafeBytes { engram_checksum64($0.baseAddress, $0.count, rowChecksum) }

    let path = url.path
    let file: SecureTemporaryFile
    do {
      file = try SecureTemporaryFile(beside: path)
    } catch {
      throw .snapshotIO(path: error.path, errno: error.errno)
    }
    let descriptor = file.descriptor
    var failure: Int32 = 0
    var written = SnapshotFormat.headerBytes
    let zeros = [UInt8](repeating: 0, count: SnapshotFormat.alignment)
    func pad(to offset: Int) {
      while failure == 0, written < offset {
        let count = min(zeros.count, offset - written)
        failure = zeros.withUnsafeBytes { SnapshotIO.writeAll(descriptor, $0.baseAddress!, count) }
        written += count
      }
    }
    func put(_ bytes: UnsafeRawBufferPointer) {
      guard failure == 0, bytes.count > 0 else { return }
      failure = SnapshotIO.writeAll(descriptor, bytes.baseAddress!, bytes.count)
      written += bytes.count
    }
    // The header goes in last, once the vector checksum is known.
    if lseek(descriptor, off_t(SnapshotFormat.headerBytes), SEEK_SET) < 0 { failure = errno }
    pad(to: layout.ids)
    ids.withUnsafeBytes { put($0) }
    pad(to: layout.sessions)
    sessions.withUnsafeBytes { put($0) }
    pad(to: layout.scopes)
    scopes.withUnsafeBytes { put($0) }
    pad(to: layout.timestamps)
    timestamps.withUnsafeBytes { put($0) }
    pad(to: layout.kinds)
    kinds.withUnsafeBytes { put($0) }
    var payloadChecksum = rowChecksum
    var codeError: Float = 0
    let chunk = SnapshotFormat.vectorChunkRows
    if codesOnly {
      pad(to: layout.codes)
      var scales = [Float](repeating: 0, count: n)
      var sums = [Int32](repeating: 0, count: n)
      let codes = UnsafeMutablePointer<Int8>.allocate(capacity: max(1, chunk * dimension))
      let floats = UnsafeMutablePointer<Float>.allocate(
        capacity: rows.quantized ? 1 : max(1, chunk * dimension))
      defer {
        codes.deallocate()
        floats.deallocate()
      }
      if rows.quantized { codeError = rows.codeErrorBound }
      var start = 0
      while failure == 0, start < n {
        let count = min(chunk, n - start)
        if rows.quantized {
          // The codes the index searches by, as they are (their bound covers them).
          for index in 0..<count {
            let row = Int(order[start + index].row)
            (codes + index * dimension).update(from: rows.codes + row * dimension, count: dimension)
            scales[start + index] = rows.scales[row]
            sums[start + index] = rows.codeSums[row]
          }
        } else {
          for index in 0..<count {
            (floats + index * dimension).update(
              from: rows.vector(Int(order[start + index].row)), count: dimension)
          }
          scales.withUnsafeMutableBufferPointer { scales in
            sums.withUnsafeMutableBufferPointer { sums in
              codeError = max(
                codeError,
                engram_quantize_rows_i8(
                  floats, count, dimension, codes, scales.baseAddress! + start, sums.baseAddress! + start))
            }
          }
        }
        let bytes = UnsafeRawBufferPointer(start: codes, count: count * dimension)
        payloadChecksum = engram_checksum64(bytes.baseAddress, bytes.count, payloadChecksum)
        put(bytes)
        start += count
      }
      pad(to: layout.scales)
      scales.withUnsafeBytes {
        payloadChecksum = engram_checksum64($0.baseAddress, $0.count, payloadChecksum)
        put($0)
      }
      pad(to: layout.sums)
      sums.withUnsafeBytes {
        payloadChecksum = engram_checksum64($0.baseAddress, $0.count, payloadChecksum)
        put($0)
      }
    } else {
      pad(to: layout.vectors)
      let buffer = UnsafeMutablePointer<Float>.allocate(capacity: max(1, chunk * dimension))
      defer { buffer.deallocate() }
      var start = 0
      while failure == 0, start < n {
        let count = min(chunk, n - start)
        for index in 0..<count {
          (buffer + index * dimension).update(
            from: rows.vector(Int(order[start + index].row)), count: dimension)
        }
        let bytes = UnsafeRawBufferPointer(start: buffer, count: count * dimension * 4)
        payloadChecksum = engram_checksum64(bytes.baseAddress, bytes.count, payloadChecksum)
        put(bytes)
        start += count
      }
    }

    var header = [UInt8](repeating: 0, count: SnapshotFormat.headerBytes)
    header.replaceSubrange(0..<8, with: SnapshotFormat.magic)
    func set<T: FixedWidthInteger>(_ value: T, at offset: Int) {
      withUnsafeBytes(of: value.littleEndian) {
        header.replaceSubrange(offset..<(offset + $0.count), with: $0)
      }
    }
    set(codesOnly ? SnapshotFormat.codesVersion : SnapshotFormat.version, at: 8)
    set(UInt32(dimension), at: 12)
    set(UInt64(n), at: 16)
    set(token, at: 24)
    if codesOnly {
      set(codeError.bitPattern, at: 32)
    } else {
      set(UInt64(layout.total), at: 32)
    }
    set(rowChecksum, at: 40)
    set(payloadChecksum, at: 48)
    set(SnapshotFormat.headerChecksum(header), at: 56)
    if failure == 0 {
      let count = header.withUnsafeBytes { pwrite(descriptor, $0.baseAddress, $0.count, 0) }
      if count != SnapshotFormat.headerBytes { failure = count < 0 ? errno : EIO }
    }
    guard failure == 0 else {
      file.discard()
      throw .snapshotIO(path: file.path, errno: failure)
    }
    do {
      try file.commit()
    } catch {
      throw .snapshotIO(path: error.path, errno: error.errno)
    }
    // The approximate tier's lists go beside it (see `ListsFormat`).
    try Self.writeLists(version, order: order, snapshot: url, token: token, rowChecksum: rowChecksum)
  }

  /// Opens a snapshot written by `write(snapshotTo:token:)` by mapping it read-only.
  ///
  /// - Parameters:
  ///   - url: the snapshot file.
  ///   - expectedToken: the token the store says is current.
  ///   - configuration: precision, threads etc. for the new index; its dimension must match
  ///     the file. Nil takes the file's dimension and default settings.
  ///   - verification: `.rowTable` (the default) or `.full` (every vector's bytes too).
  ///   - rowSource: where the index reads float32 rows when the file holds int8 codes only
  ///     (`SnapshotContent.codes`); such a file is refused without one. Ignored otherwise.
  /// - Throws: `.snapshotIO` (missing, unreadable), `.snapshotCorrupt` (magic, version,
  ///   length, checksum, rows out of order), `.snapshotStale` (token differs),
  ///   `.snapshotDimensionMismatch`, `.floatRowsUnavailable` (codes without a source).
  ///   Rebuild from the store on any of these.
  /// - Complexity: O(n) over the 33-byte row table (O(n · dimension) with `.full`); no
  ///   vector or code is read. int8 precision over float32 rows copies and quantizes them
  ///   (O(n · dimension)); a file of codes is searched in place.
  public static func open(
    snapshot url: URL, expectedToken: UInt64, configuration: Configuration? = nil,
    verification: SnapshotVerification = .rowTable, rowSource: (any FloatRowSource)? = nil
  ) throws(VectorIndexError) -> VectorIndex {
    try open(
      snapshot: url, expectedToken: expectedToken, configuration: configuration, verification: verification,
      rowSource: rowSource, requireSource: true)
  }

  static func open(
    snapshot url: URL, expectedToken: UInt64, configuration: Configuration?,
    verification: SnapshotVerification, rowSource: (any FloatRowSource)?, requireSource: Bool
  ) throws(VectorIndexError) -> VectorIndex {
    let path = url.path
    let descriptor = SnapshotIO.openFile(path, O_RDONLY | O_CLOEXEC)
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
    guard formatVersion == SnapshotFormat.version || formatVersion == SnapshotFormat.codesVersion else {
      throw .snapshotCorrupt(path: path, reason: .unsupportedVersion(formatVersion))
    }
    let codesOnly = formatVersion == SnapshotFormat.codesVersion
    guard SnapshotFormat.headerChecksum(header) == get(UInt64.self, at: 56) else {
      throw .snapshotCorrupt(path: path, reason: .checksumMismatch)
    }
    let dimension = Int(get(UInt32.self, at: 12))
    let rawCount = get(UInt64.self, at: 16)
    let token = get(UInt64.self, at: 24)
    let recordedBytes = get(UInt64.self, at: 32)
    let codeError = Float(bitPattern: get(UInt32.self, at: 32))
    let rowChecksum = get(UInt64.self, at: 40)
    let payloadChecksum = get(UInt64.self, at: 48)
    guard dimension > 0, dimension <= 65_536, rawCount < UInt64(Int32.max) else {
      throw .snapshotCorrupt(path: path, reason: .invalidHeader)
    }
    let n = Int(rawCount)
    let layout = SnapshotFormat.layout(count: n, dimension: dimension, codesOnly: codesOnly)
    if codesOnly {
      // The error bound of unit rows' codes is far below 1; anything else is damage.
      guard codeError.isFinite, codeError >= 0, codeError < 1, recordedBytes >> 32 == 0 else {
        throw .snapshotCorrupt(path: path, reason: .invalidHeader)
      }
    } else {
      guard recordedBytes == UInt64(layout.total) else {
        throw .snapshotCorrupt(path: path, reason: .invalidHeader)
      }
    }
    guard fileBytes == layout.total else {
      throw .snapshotCorrupt(path: path, reason: .lengthMismatch(expected: layout.total, actual: fileBytes))
    }
    guard token == expectedToken else {
      throw .snapshotStale(path: path, expected: expectedToken, found: token)
    }
    var configuration = configuration ?? Configuration(dimension: dimension)
    guard configuration.dimension == dimension else {
      throw .snapshotDimensionMismatch(path: path, expected: configuration.dimension, found: dimension)
    }
    try configuration.validate()
    if codesOnly, requireSource, rowSource == nil {
      throw .floatRowsUnavailable(reason: "\(path) holds int8 codes only and no float row source was given")
    }

    guard let raw = mmap(nil, fileBytes, PROT_READ, MAP_SHARED, descriptor, 0), raw != MAP_FAILED else {
      throw .snapshotIO(path: path, errno: errno)
    }
    let mapping = SnapshotMapping(base: UnsafeRawPointer(raw), length: fileBytes)
    let base = mapping.base
    var computed = SnapshotFormat.seed(dimension: dimension, count: n, token: token)
    for offset in [layout.ids, layout.sessions, layout.scopes, layout.timestamps] {
      computed = engram_checksum64(base + offset, n * 8, computed)
    }
    computed = engram_checksum64(base + layout.kinds, n, computed)
    guard computed == rowChecksum else { throw .snapshotCorrupt(path: path, reason: .checksumMismatch) }
    // An int8 index over float32 rows quantizes every row now: it checks them first.
    let copiesRows = configuration.precision == .int8 && !codesOnly
    if verification == .full || copiesRows {
      let payload = SnapshotFormat.payloadChecksum(
        base, layout, count: n, dimension: dimension, seed: computed)
      guard payload == payloadChecksum else { throw .snapshotCorrupt(path: path, reason: .checksumMismatch) }
    }
    // Rows in strictly ascending id order (what the binary search relies on), known kinds.
    let ids = (base + layout.ids).assumingMemoryBound(to: Int64.self)
    let kinds = (base + layout.kinds).assumingMemoryBound(to: UInt8.self)
    let kindCount = VectorMetadata.kindLimit
    for row in 0..<n {
      guard kinds[row] < kindCount, row == 0 || ids[row - 1] < ids[row] else {
        throw .snapshotCorrupt(path: path, reason: .invalidRow(index: row))
      }
    }

    if configuration.precision == .float32 || codesOnly {
      // Room to append after the file's rows without copying them (a snapshot that lags is
      // brought up to date by appending); when it cannot be made, an append copies.
      mapping.mapColumns(descriptor: descriptor, layout: layout, count: n, dimension: dimension)
    }
    var rows = RowStore(
      mapping: mapping, layout: layout, count: n, dimension: dimension, codeError: codeError)
    if configuration.precision == .int8, !codesOnly {
      // Codes are computed, not stored: copy into owned, quantized rows.
      let owned = RowStore(
        dimension: dimension, capacity: max(n, configuration.initialCapacity), quantized: true)
      owned.copyRows(from: rows, range: 0..<n, to: 0)
      rows = owned
    }
    configuration.initialCapacity = max(configuration.initialCapacity, n)
    var version = IndexVersion(sortedRows: rows, count: n)
    let checksLater = verification != .full && !copiesRows
    var parts: [SnapshotPayloadCheck.Part] = []
    if checksLater {
      let seed = computed
      parts.append(
        SnapshotPayloadCheck.Part(mapping: mapping, expected: payloadChecksum) { base in
          SnapshotFormat.payloadChecksum(base, layout, count: n, dimension: dimension, seed: seed)
        })
    }
    if configuration.approximate.enabled,
      let (lists, listCodes) = openLists(
        snapshot: url, token: token, rowChecksum: rowChecksum, rows: n, dimension: dimension,
        full: !checksLater)
    {
      version.ivf = lists
      if let listCodes { parts.append(listCodes) }
    }
    // Without lists (or with another snapshot's) the next write builds them: an open alone
    // starts no work, since a short-lived reader would pay for a build it never uses.
    // The payload stays mapped and unread: checked before the first read that trusts it.
    let payloadCheck = parts.isEmpty ? nil : SnapshotPayloadCheck(path: path, parts: parts)
    return VectorIndex(
      configuration: configuration, version: version, rowSource: codesOnly ? rowSource : nil,
      payloadCheck: payloadCheck)
  }

  /// Checks every byte of a snapshot (header, token, row table and vectors), as `doctor`
  /// does; `open` checks all but the vectors.
  /// - Throws: as `open(snapshot:expectedToken:configuration:verification:)`.
  public static func verifySnapshot(_ url: URL, expectedToken: UInt64, dimension: Int)
    throws(VectorIndexError)
  {
    _ = try open(
      snapshot: url, expectedToken: expectedToken,
      configuration: Configuration(
        dimension: dimension, approximate: ApproximateConfiguration(enabled: false)),
      verification: .full, rowSource: nil, requireSource: false)
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
