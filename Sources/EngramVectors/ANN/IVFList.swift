import CEngramKernels

/// Storage of one inverted list: row numbers, int8 codes (one scale per row, as `RowStore`
/// quantizes) and code sums, contiguous so a probe is one kernel call over the list.
///
/// Append-only like `RowStore`: entries below a published count are never rewritten, so an
/// older `IVFList` value keeps reading its prefix while the single writer appends. A full list
/// grows by a quarter (lists are sized exactly when built; doubling would waste up to half). Mapped
/// storage (from a snapshot) has its capacity equal to its count: the first append copies.
final class IVFListStorage: @unchecked Sendable {
  let capacity: Int
  let dimension: Int
  let rows: UnsafeMutablePointer<Int32>
  let codes: UnsafeMutablePointer<Int8>
  let scales: UnsafeMutablePointer<Float>
  let sums: UnsafeMutablePointer<Int32>
  /// The snapshot mapping the columns point into, or nil when allocated here.
  let mapping: SnapshotMapping?

  init(capacity: Int, dimension: Int) {
    self.capacity = max(capacity, 1)
    self.dimension = dimension
    rows = .allocate(capacity: self.capacity)
    codes = .allocate(capacity: self.capacity * dimension)
    scales = .allocate(capacity: self.capacity)
    sums = .allocate(capacity: self.capacity)
    mapping = nil
  }

  /// A read-only view of `count` entries inside a mapped snapshot.
  init(
    mapping: SnapshotMapping, count: Int, dimension: Int, rows: Int, codes: Int, scales: Int, sums: Int
  ) {
    capacity = count
    self.dimension = dimension
    self.mapping = mapping
    func column<T>(_ offset: Int, _ type: T.Type) -> UnsafeMutablePointer<T> {
      UnsafeMutableRawPointer(mutating: mapping.base + offset).assumingMemoryBound(to: T.self)
    }
    self.rows = column(rows, Int32.self)
    self.codes = column(codes, Int8.self)
    self.scales = column(scales, Float.self)
    self.sums = column(sums, Int32.self)
  }

  deinit {
    guard mapping == nil else { return }
    rows.deallocate()
    codes.deallocate()
    scales.deallocate()
    sums.deallocate()
  }
}

/// One inverted list as one index version sees it: shared storage and its published length.
struct IVFList: Sendable {
  private(set) var storage: IVFListStorage
  /// Published entries (only the single writer changes it, on its own version).
  var count: Int

  init(dimension: Int, capacity: Int = 4) {
    storage = IVFListStorage(capacity: capacity, dimension: dimension)
    count = 0
  }

  init(storage: IVFListStorage, count: Int) {
    self.storage = storage
    self.count = count
  }

  /// Appends `row` with its unit vector; returns the row's quantization error norm.
  /// Only the single writer calls this, on its own version.
  mutating func append(row: Int32, vector: UnsafePointer<Float>) -> Float {
    let dimension = storage.dimension
    if count == storage.capacity {
      let grown = IVFListStorage(
        capacity: max(8, storage.capacity + storage.capacity / 4), dimension: dimension)
      grown.rows.update(from: storage.rows, count: count)
      grown.codes.update(from: storage.codes, count: count * dimension)
      grown.scales.update(from: storage.scales, count: count)
      grown.sums.update(from: storage.sums, count: count)
      storage = grown
    }
    storage.rows[count] = row
    let error = engram_quantize_rows_i8(
      vector, 1, dimension, storage.codes + count * dimension, storage.scales + count, storage.sums + count)
    count += 1
    return error
  }

  /// Bytes held by the published entries' storage.
  var bytes: Int { storage.capacity * (storage.dimension + 12) }
}
