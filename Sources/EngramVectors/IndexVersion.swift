/// An immutable view of the index that a search reads without holding any lock.
///
/// Value-typed parts (tombstone bits, id-map shards, posting counts) are copied on write by
/// the single writer; row data and posting entries are shared and append-only.
struct IndexVersion: Sendable {
  static let shardCount = 64

  var rows: RowStore
  /// Rows appended so far (live and tombstoned).
  var count: Int = 0
  /// Rows not tombstoned.
  var live: Int = 0
  /// One bit per row; set = tombstoned.
  var dead: [UInt64] = []
  /// id -> row, split in shards so a small write batch copies only the shards it touches.
  var idShards: [[Int64: Int32]] = Array(repeating: [:], count: IndexVersion.shardCount)
  var kindPostings: [Posting] = (0..<Int(VectorMetadata.kindLimit)).map { _ in Posting() }
  var sessionPostings: [Int64: Posting] = [:]
  var scopePostings: [Int64: Posting] = [:]
  /// Rows `0..<sortedBase` came from a snapshot in ascending id order: they are found by
  /// binary search and have no id-map entries or postings (building those for a million
  /// rows would cost more than the rest of an open). Rows appended later have both.
  var sortedBase = 0
  /// The approximate tier's lists over rows `0..<ivf.assignedRows`, when built.
  var ivf: IVFState? = nil
  /// Bumped when rows are renumbered (compaction), so a list build from an older version
  /// is not published over rows it does not describe.
  var rowEpoch = 0

  init(rows: RowStore) {
    self.rows = rows
  }

  /// A version over `count` rows already in `rows`, in strictly ascending id order.
  init(sortedRows rows: RowStore, count: Int) {
    self.rows = rows
    self.count = count
    self.live = count
    self.sortedBase = count
    self.dead = [UInt64](repeating: 0, count: (count + 63) / 64)
  }

  @inline(__always) static func shard(_ id: Int64) -> Int {
    Int(truncatingIfNeeded: (UInt64(bitPattern: id) &* 0x9E37_79B9_7F4A_7C15) >> 58)
  }

  @inline(__always) func row(of id: Int64) -> Int32? {
    if let row = idShards[Self.shard(id)][id] { return row }
    guard sortedBase > 0, let row = baseRow(of: id), !isDead(row) else { return nil }
    return Int32(row)
  }

  /// The row of `id` among the sorted snapshot rows (dead or not), by binary search.
  func baseRow(of id: Int64) -> Int? {
    let ids = rows.ids
    var low = 0
    var high = sortedBase
    while low < high {
      let middle = (low + high) / 2
      if ids[middle] < id { low = middle + 1 } else { high = middle }
    }
    return low < sortedBase && ids[low] == id ? low : nil
  }

  /// Tombstones the live row of `id`; returns whether there was one.
  mutating func removeID(_ id: Int64) -> Bool {
    if let row = idShards[Self.shard(id)].removeValue(forKey: id) {
      markDead(Int(row))
      return true
    }
    guard sortedBase > 0, let row = baseRow(of: id), !isDead(row) else { return false }
    markDead(row)
    return true
  }

  @inline(__always) func isDead(_ row: Int) -> Bool {
    dead.withUnsafeBufferPointer { ($0[row >> 6] >> UInt64(row & 63)) & 1 == 1 }
  }

  mutating func markDead(_ row: Int) {
    dead[row >> 6] |= 1 << UInt64(row & 63)
    live -= 1
  }

  /// Bytes held by this version's rows, postings and maps (approximate for the maps).
  var memoryBytes: Int {
    let rowBytes = rows.bytes
    let postings =
      (kindPostings.map(\.list.capacity).reduce(0, +)
        + sessionPostings.values.map(\.list.capacity).reduce(0, +)
        + scopePostings.values.map(\.list.capacity).reduce(0, +)) * 4
    let idMap = idShards.map { $0.capacity * 16 }.reduce(0, +)
    return rowBytes + postings + idMap + dead.count * 8 + (ivf?.bytes ?? 0)
  }

  /// Appends one already-normalized row (vector written by the caller at row `count`).
  mutating func appendRow(id: Int64, metadata: VectorMetadata) {
    let row = count
    rows.ids[row] = id
    rows.sessions[row] = metadata.session
    rows.scopes[row] = metadata.scope
    rows.timestamps[row] = metadata.timestamp
    rows.kinds[row] = metadata.kind
    let r32 = Int32(row)
    idShards[Self.shard(id)][id] = r32
    kindPostings[Int(metadata.kind)].append(r32)
    sessionPostings[metadata.session, default: Posting()].append(r32)
    scopePostings[metadata.scope, default: Posting()].append(r32)
    if row >> 6 >= dead.count { dead.append(0) }
    count += 1
    live += 1
  }
}
