import CEngramKernels
import Foundation

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// The approximate tier's lists beside a snapshot, in `<snapshot>.lists` (little-endian):
///
///     0 magic "ENGRIVF\0"   8 version u32   12 dimension u32   16 lists u32   20 probes u32
///    24 rows u64            32 token u64    40 the snapshot's row-table checksum u64
///    48 file bytes u64      56 clustered rows u64   64 target recall f64
///    72 calibrated recall f64   80 code error f32   88 table checksum u64
///    96 code checksum u64   120 header checksum u64 (of bytes 0..<120)
///    then, each on a 4096-byte boundary: centroids f32[lists * dimension], radii f32[lists],
///    list offsets i64[lists + 1], rows i32[n] (snapshot positions), codes i8[n * dimension],
///    scales f32[n], code sums i32[n]; entries grouped by list.
///
/// A separate file keeps version-2 snapshots readable by every build: a reader that does
/// not know the lists ignores them. It is written after the snapshot (atomically, like it)
/// and names the snapshot's token and row checksum, so lists left from another snapshot
/// (a crash between the two renames) are recognised and ignored; the index then rebuilds
/// its lists. Opening maps the file and checks the header, offsets and row numbers (4 bytes
/// a row); the codes are checked with `.full` verification, else before the first search
/// (`SnapshotPayloadCheck`).
enum ListsFormat {
  static let magic: [UInt8] = Array("ENGRIVF".utf8) + [0]
  static let version: UInt32 = 1
  static let headerBytes = 128
  /// Seed of the header checksum (of bytes 0..<120).
  static let headerSeed: UInt64 = 0x454E_4752_4956_4631

  struct Layout {
    var centroids = 0
    var radii = 0
    var offsets = 0
    var rows = 0
    var codes = 0
    var scales = 0
    var sums = 0
    var total = 0
  }

  static func layout(lists: Int, rows n: Int, dimension: Int) -> Layout {
    let align = SnapshotFormat.align
    var layout = Layout()
    layout.centroids = SnapshotFormat.alignment
    layout.radii = align(layout.centroids + lists * dimension * 4)
    layout.offsets = align(layout.radii + lists * 4)
    layout.rows = align(layout.offsets + (lists + 1) * 8)
    layout.codes = align(layout.rows + n * 4)
    layout.scales = align(layout.codes + n * dimension)
    layout.sums = align(layout.scales + n * 4)
    layout.total = layout.sums + n * 4
    return layout
  }

  static func path(_ snapshot: URL) -> String { snapshot.path + ".lists" }
}

extension VectorIndex {
  /// Writes `version`'s lists for a snapshot whose live rows are `order` (ascending ids), or
  /// removes a stale lists file when there are none.
  static func writeLists(
    _ version: IndexVersion, order: [(id: Int64, row: Int32)], snapshot: URL, token: UInt64,
    rowChecksum: UInt64
  ) throws(VectorIndexError) {
    let path = ListsFormat.path(snapshot)
    guard let ivf = version.ivf, ivf.assignedRows == version.count else {
      if unlink(path) != 0 && errno != ENOENT { throw .snapshotIO(path: path, errno: errno) }
      return
    }
    let dimension = ivf.dimension
    let n = order.count
    var position = [Int32](repeating: -1, count: version.count)
    for (index, entry) in order.enumerated() { position[Int(entry.row)] = Int32(index) }
    let listCount = ivf.listCount
    var offsets = [Int64](repeating: 0, count: listCount + 1)
    var rows = [Int32]()
    rows.reserveCapacity(n)
    var codes = [Int8]()
    codes.reserveCapacity(n * dimension)
    var scales = [Float]()
    scales.reserveCapacity(n)
    var sums = [Int32]()
    sums.reserveCapacity(n)
    for (list, entry) in ivf.lists.enumerated() {
      let storage = entry.storage
      for index in 0..<entry.count {
        let target = position[Int(storage.rows[index])]
        guard target >= 0 else { continue }
        rows.append(target)
        codes.append(
          contentsOf: UnsafeBufferPointer(start: storage.codes + index * dimension, count: dimension))
        scales.append(storage.scales[index])
        sums.append(storage.sums[index])
      }
      offsets[list + 1] = Int64(rows.count)
    }
    precondition(rows.count == n, "every live row is in one list")
    let layout = ListsFormat.layout(lists: listCount, rows: n, dimension: dimension)
    var tableChecksum = rowChecksum
    tableChecksum = ivf.centroids.withUnsafeBytes {
      engram_checksum64($0.baseAddress, $0.count, tableChecksum)
    }
    tableChecksum = ivf.radii.withUnsafeBytes { engram_checksum64($0.baseAddress, $0.count, tableChecksum) }
    tableChecksum = offsets.withUnsafeBytes { engram_checksum64($0.baseAddress, $0.count, tableChecksum) }
    tableChecksum = rows.withUnsafeBytes { engram_checksum64($0.baseAddress, $0.count, tableChecksum) }
    var codeChecksum = tableChecksum
    codeChecksum = codes.withUnsafeBytes { engram_checksum64($0.baseAddress, $0.count, codeChecksum) }
    codeChecksum = scales.withUnsafeBytes { engram_checksum64($0.baseAddress, $0.count, codeChecksum) }
    codeChecksum = sums.withUnsafeBytes { engram_checksum64($0.baseAddress, $0.count, codeChecksum) }

    var header = [UInt8](repeating: 0, count: ListsFormat.headerBytes)
    header.replaceSubrange(0..<8, with: ListsFormat.magic)
    func set<T: FixedWidthInteger>(_ value: T, at offset: Int) {
      withUnsafeBytes(of: value.littleEndian) {
        header.replaceSubrange(offset..<(offset + $0.count), with: $0)
      }
    }
    set(ListsFormat.version, at: 8)
    set(UInt32(dimension), at: 12)
    set(UInt32(listCount), at: 16)
    set(UInt32(ivf.probes), at: 20)
    set(UInt64(n), at: 24)
    set(token, at: 32)
    set(rowChecksum, at: 40)
    set(UInt64(layout.total), at: 48)
    set(UInt64(ivf.clusteredRows), at: 56)
    set(ivf.targetRecall.bitPattern, at: 64)
    set(ivf.calibratedRecall.bitPattern, at: 72)
    set(ivf.codeError.bitPattern, at: 80)
    set(tableChecksum, at: 88)
    set(codeChecksum, at: 96)
    set(header.withUnsafeBytes { engram_checksum64($0.baseAddress, 120, ListsFormat.headerSeed) }, at: 120)

    let file: SecureTemporaryFile
    do {
      file = try SecureTemporaryFile(beside: path)
    } catch {
      throw .snapshotIO(path: error.path, errno: error.errno)
    }
    var failure: Int32 = 0
    var written = 0
    func put(_ bytes: UnsafeRawBufferPointer, at offset: Int) {
      guard failure == 0 else { return }
      let zeros = [UInt8](repeating: 0, count: max(0, offset - written))
      if !zeros.isEmpty {
        failure = zeros.withUnsafeBytes { SnapshotIO.writeAll(file.descriptor, $0.baseAddress!, $0.count) }
      }
      if failure == 0, bytes.count > 0 {
        failure = SnapshotIO.writeAll(file.descriptor, bytes.baseAddress!, bytes.count)
      }
      written = offset + bytes.count
    }
    header.withUnsafeBytes { put($0, at: 0) }
    ivf.centroids.withUnsafeBytes { put($0, at: layout.centroids) }
    ivf.radii.withUnsafeBytes { put($0, at: layout.radii) }
    offsets.withUnsafeBytes { put($0, at: layout.offsets) }
    rows.withUnsafeBytes { put($0, at: layout.rows) }
    codes.withUnsafeBytes { put($0, at: layout.codes) }
    scales.withUnsafeBytes { put($0, at: layout.scales) }
    sums.withUnsafeBytes { put($0, at: layout.sums) }
    guard failure == 0 else {
      file.discard()
      throw .snapshotIO(path: file.path, errno: failure)
    }
    do {
      try file.commit()
    } catch {
      throw .snapshotIO(path: error.path, errno: error.errno)
    }
  }

  /// The lists beside `snapshot` if they belong to it (same token and row checksum, `n`
  /// rows, `dimension`) and pass their checks; nil otherwise (the index rebuilds them).
  /// Unless `full`, their codes are not read: the check of them to run before the first
  /// search comes back with the lists.
  static func openLists(
    snapshot: URL, token: UInt64, rowChecksum: UInt64, rows n: Int, dimension: Int, full: Bool
  ) -> (IVFState, SnapshotPayloadCheck.Part?)? {
    let path = ListsFormat.path(snapshot)
    let descriptor = SnapshotIO.openFile(path, O_RDONLY | O_CLOEXEC)
    guard descriptor >= 0 else { return nil }
    defer { close(descriptor) }
    var status = stat()
    guard fstat(descriptor, &status) == 0, Int(status.st_size) >= ListsFormat.headerBytes else { return nil }
    var header = [UInt8](repeating: 0, count: ListsFormat.headerBytes)
    guard
      header.withUnsafeMutableBytes({ SnapshotIO.readAll(descriptor, $0.baseAddress!, $0.count, offset: 0) })
        == 0
    else { return nil }
    func get<T: FixedWidthInteger>(_ type: T.Type, at offset: Int) -> T {
      header.withUnsafeBytes { T(littleEndian: $0.loadUnaligned(fromByteOffset: offset, as: T.self)) }
    }
    guard Array(header[0..<8]) == ListsFormat.magic, get(UInt32.self, at: 8) == ListsFormat.version,
      header.withUnsafeBytes({ engram_checksum64($0.baseAddress, 120, ListsFormat.headerSeed) })
        == get(UInt64.self, at: 120),
      Int(get(UInt32.self, at: 12)) == dimension, get(UInt64.self, at: 24) == UInt64(n),
      get(UInt64.self, at: 32) == token, get(UInt64.self, at: 40) == rowChecksum
    else { return nil }
    let listCount = Int(get(UInt32.self, at: 16))
    let probes = Int(get(UInt32.self, at: 20))
    guard listCount >= 1, listCount <= max(1, n), probes >= 1, probes <= listCount else { return nil }
    let layout = ListsFormat.layout(lists: listCount, rows: n, dimension: dimension)
    guard get(UInt64.self, at: 48) == UInt64(layout.total), Int(status.st_size) == layout.total else {
      return nil
    }
    guard let raw = mmap(nil, layout.total, PROT_READ, MAP_SHARED, descriptor, 0), raw != MAP_FAILED else {
      return nil
    }
    let mapping = SnapshotMapping(base: UnsafeRawPointer(raw), length: layout.total)
    let base = mapping.base
    var checksum = rowChecksum
    checksum = engram_checksum64(base + layout.centroids, listCount * dimension * 4, checksum)
    checksum = engram_checksum64(base + layout.radii, listCount * 4, checksum)
    checksum = engram_checksum64(base + layout.offsets, (listCount + 1) * 8, checksum)
    checksum = engram_checksum64(base + layout.rows, n * 4, checksum)
    guard checksum == get(UInt64.self, at: 88) else { return nil }
    let tableChecksum = checksum
    let codeCheck = SnapshotPayloadCheck.Part(mapping: mapping, expected: get(UInt64.self, at: 96)) { base in
      var codes = engram_checksum64(base + layout.codes, n * dimension, tableChecksum)
      codes = engram_checksum64(base + layout.scales, n * 4, codes)
      return engram_checksum64(base + layout.sums, n * 4, codes)
    }
    if full {
      guard codeCheck.checksum(base) == codeCheck.expected else { return nil }
    }
    // Offsets ascending from 0 to n, row numbers in range: what the search relies on.
    let offsets = (base + layout.offsets).assumingMemoryBound(to: Int64.self)
    guard offsets[0] == 0, offsets[listCount] == Int64(n) else { return nil }
    for list in 0..<listCount where offsets[list] > offsets[list + 1] { return nil }
    let rows = (base + layout.rows).assumingMemoryBound(to: Int32.self)
    for index in 0..<n where rows[index] < 0 || Int(rows[index]) >= n { return nil }

    let centroids = Array(
      UnsafeBufferPointer(
        start: (base + layout.centroids).assumingMemoryBound(to: Float.self), count: listCount * dimension))
    let radii = Array(
      UnsafeBufferPointer(start: (base + layout.radii).assumingMemoryBound(to: Float.self), count: listCount))
    let lists = (0..<listCount).map { list -> IVFList in
      let start = Int(offsets[list])
      let count = Int(offsets[list + 1]) - start
      let storage = IVFListStorage(
        mapping: mapping, count: count, dimension: dimension, rows: layout.rows + start * 4,
        codes: layout.codes + start * dimension, scales: layout.scales + start * 4,
        sums: layout.sums + start * 4)
      return IVFList(storage: storage, count: count)
    }
    let state = IVFState(
      dimension: dimension, centroids: centroids,
      centroidCodes: CentroidCodes(centroids, lists: listCount, dimension: dimension), lists: lists,
      radii: radii,
      codeError: Float(bitPattern: get(UInt32.self, at: 80)), assignedRows: n,
      clusteredRows: Int(get(UInt64.self, at: 56)), appendedRows: 0, probes: probes,
      calibratedRecall: Double(bitPattern: get(UInt64.self, at: 72)),
      targetRecall: Double(bitPattern: get(UInt64.self, at: 64)))
    return (state, full ? nil : codeCheck)
  }
}
