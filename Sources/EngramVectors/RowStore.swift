import CEngramKernels
import Synchronization

/// Preallocated, 64-byte-aligned column storage for index rows.
///
/// Rows are append-only: a row below a published count is never written again, so readers
/// holding an `IndexVersion` read rows `0..<count` without locks while the single writer
/// appends rows at and beyond that count. Growing past the capacity copies into a new store;
/// older versions keep the old one alive until their readers finish.
final class RowStore: @unchecked Sendable {
  let dimension: Int
  let capacity: Int
  let quantized: Bool
  /// Rows `0..<floatless` hold no float32 components here (their `vectors` slots are never
  /// written or read): they came from a snapshot of int8 codes, and the index reads their
  /// float32 rows from its `FloatRowSource`. Such a store is always quantized.
  let floatless: Int
  /// Set once the float32 rows of `0..<floatless` were read from the source into `vectors`
  /// (for a clustering of the approximate tier, which reads every row); searches still read
  /// them from the source.
  let hydrated = Mutex<Bool>(false)
  /// Whether the codes, scales and sums point into `mapping` (a snapshot of codes) and the
  /// float32 slots were allocated.
  private let mappedCodes: Bool
  let vectors: UnsafeMutablePointer<Float>
  let ids: UnsafeMutablePointer<Int64>
  let sessions: UnsafeMutablePointer<Int64>
  let scopes: UnsafeMutablePointer<Int64>
  let timestamps: UnsafeMutablePointer<Int64>
  let kinds: UnsafeMutablePointer<UInt8>
  // int8 mode only (otherwise 1-element placeholders): codes, per-row scale and code sum.
  let codes: UnsafeMutablePointer<Int8>
  let scales: UnsafeMutablePointer<Float>
  let codeSums: UnsafeMutablePointer<Int32>
  /// The snapshot mapping the columns point into (nil when they were allocated). The file's
  /// rows are never written; rows beyond them go into the mapping's column regions while
  /// they have room, else an append copies the rows into an allocated store first.
  let mapping: SnapshotMapping?
  /// An upper bound of `|| row - scale * codes ||` over every quantized row (Float bits).
  /// Only grows, so a reader of an older version still gets a bound for its rows.
  private let codeErrorBits = Atomic<UInt32>(0)

  /// The largest quantization error of any row quantized so far (int8 mode).
  var codeErrorBound: Float { Float(bitPattern: codeErrorBits.load(ordering: .relaxed)) }

  private func raiseCodeErrorBound(_ error: Float) {
    if error > codeErrorBound { codeErrorBits.store(error.bitPattern, ordering: .relaxed) }
  }

  /// An allocated store; rows `0..<floatless` will hold codes only (see `floatless`).
  init(dimension: Int, capacity: Int, quantized: Bool, floatless: Int = 0) {
    self.dimension = dimension
    self.capacity = max(capacity, 1)
    self.quantized = quantized || floatless > 0
    self.floatless = floatless
    mappedCodes = false
    let quantized = self.quantized
    let rows = self.capacity
    // The float32 slots of floatless rows are never touched, so their pages are never made.
    vectors = Self.allocate(Float.self, rows * dimension)
    ids = Self.allocate(Int64.self, rows)
    sessions = Self.allocate(Int64.self, rows)
    scopes = Self.allocate(Int64.self, rows)
    timestamps = Self.allocate(Int64.self, rows)
    kinds = Self.allocate(UInt8.self, rows)
    codes = Self.allocate(Int8.self, quantized ? rows * dimension : 1)
    scales = Self.allocate(Float.self, quantized ? rows : 1)
    codeSums = Self.allocate(Int32.self, quantized ? rows : 1)
    mapping = nil
  }

  /// Rows backed by a mapped snapshot. The file's rows are never written; when the mapping
  /// has column regions (`SnapshotMapping.mapColumns`), rows after them can be appended in
  /// place, else the capacity is the row count. A snapshot of int8 codes (`layout.codes`)
  /// gives a floatless store: the codes, scales and sums are mapped, and float32 slots are
  /// allocated (untouched) for rows appended later.
  init(
    mapping: SnapshotMapping, layout: SnapshotFormat.Layout, count: Int, dimension: Int, codeError: Float = 0
  ) {
    self.dimension = dimension
    self.mapping = mapping
    let regions = mapping.columns
    self.capacity = regions.isEmpty ? count : mapping.columnCapacity
    func column<T>(_ index: Int, _ offset: Int, _ type: T.Type) -> UnsafeMutablePointer<T> {
      let base =
        regions.isEmpty ? UnsafeMutableRawPointer(mutating: mapping.base + offset) : regions[index].base
      return base.assumingMemoryBound(to: T.self)
    }
    ids = column(0, layout.ids, Int64.self)
    sessions = column(1, layout.sessions, Int64.self)
    scopes = column(2, layout.scopes, Int64.self)
    timestamps = column(3, layout.timestamps, Int64.self)
    kinds = column(4, layout.kinds, UInt8.self)
    mappedCodes = layout.codesOnly
    if layout.codesOnly {
      quantized = true
      floatless = count
      codes = column(5, layout.codes, Int8.self)
      scales = column(6, layout.scales, Float.self)
      codeSums = column(7, layout.sums, Int32.self)
      vectors = Self.allocate(Float.self, capacity * dimension)
      codeErrorBits.store(codeError.bitPattern, ordering: .relaxed)
    } else {
      quantized = false
      floatless = 0
      vectors = column(5, layout.vectors, Float.self)
      // Placeholders, as for a float32 store.
      codes = Self.allocate(Int8.self, 1)
      scales = Self.allocate(Float.self, 1)
      codeSums = Self.allocate(Int32.self, 1)
    }
  }

  deinit {
    if mapping != nil {
      // The allocated columns: float32 slots of a floatless store, else the placeholders.
      let owned =
        mappedCodes
        ? [UnsafeMutableRawPointer(vectors)]
        : [
          UnsafeMutableRawPointer(codes), UnsafeMutableRawPointer(scales), UnsafeMutableRawPointer(codeSums),
        ]
      for pointer in owned { engram_free_rows(pointer) }
      return
    }
    for pointer in [
      UnsafeMutableRawPointer(vectors), UnsafeMutableRawPointer(ids), UnsafeMutableRawPointer(sessions),
      UnsafeMutableRawPointer(scopes), UnsafeMutableRawPointer(timestamps), UnsafeMutableRawPointer(kinds),
      UnsafeMutableRawPointer(codes), UnsafeMutableRawPointer(scales), UnsafeMutableRawPointer(codeSums),
    ] {
      engram_free_rows(pointer)
    }
  }

  private static func allocate<T>(_ type: T.Type, _ count: Int) -> UnsafeMutablePointer<T> {
    // Large columns (the vectors) get huge pages; see engram_alloc_rows.
    guard let raw = engram_alloc_rows(max(count, 1) * MemoryLayout<T>.stride) else {
      fatalError("RowStore: out of memory allocating \(count) \(T.self)")
    }
    return raw.bindMemory(to: T.self, capacity: max(count, 1))
  }

  /// Bytes held per row (all columns), for memory reporting.
  var bytesPerRow: Int {
    dimension * 4 + 8 * 4 + 1 + (quantized ? dimension + 8 : 0)
  }

  /// Bytes held by the columns (float32 slots of floatless rows are never made).
  var bytes: Int {
    capacity * bytesPerRow - (hydrated.withLock { $0 } ? 0 : floatless * dimension * 4)
  }

  /// Whether row `row`'s float32 components are in `vectors` (else in the index's source).
  @inline(__always) func holdsFloats(_ row: Int) -> Bool { row >= floatless }

  /// Pointer to row `row`'s float32 components.
  @inline(__always) func vector(_ row: Int) -> UnsafeMutablePointer<Float> {
    vectors + row * dimension
  }

  /// Copies `count` rows starting at `source` row `from` into this store at row `to`.
  func copyRows(from source: RowStore, range: Range<Int>, to destination: Int) {
    let n = range.count
    guard n > 0 else { return }
    let s = range.lowerBound
    // Float32 rows only where the source holds them (a floatless prefix has none).
    let floatStart = min(max(s, source.floatless), range.upperBound)
    let floatOffset = floatStart - s
    (vectors + (destination + floatOffset) * dimension).update(
      from: source.vectors + floatStart * dimension, count: (range.upperBound - floatStart) * dimension)
    (ids + destination).update(from: source.ids + s, count: n)
    (sessions + destination).update(from: source.sessions + s, count: n)
    (scopes + destination).update(from: source.scopes + s, count: n)
    (timestamps + destination).update(from: source.timestamps + s, count: n)
    (kinds + destination).update(from: source.kinds + s, count: n)
    if quantized && source.quantized {
      (codes + destination * dimension).update(from: source.codes + s * dimension, count: n * dimension)
      (scales + destination).update(from: source.scales + s, count: n)
      (codeSums + destination).update(from: source.codeSums + s, count: n)
      raiseCodeErrorBound(source.codeErrorBound)
    } else if quantized {
      quantize(range: destination..<(destination + n))
    }
  }

  /// Computes the int8 codes of rows in `range` from their float32 vectors.
  func quantize(range: Range<Int>) {
    guard quantized, !range.isEmpty else { return }
    raiseCodeErrorBound(
      engram_quantize_rows_i8(
        vector(range.lowerBound), range.count, dimension, codes + range.lowerBound * dimension,
        scales + range.lowerBound, codeSums + range.lowerBound))
  }
}

/// A growable append-only list of row numbers shared between index versions.
///
/// Like `RowStore`, entries below any published count are never rewritten.
final class RowList: @unchecked Sendable {
  let capacity: Int
  let rows: UnsafeMutablePointer<Int32>

  init(capacity: Int) {
    self.capacity = max(capacity, 4)
    rows = UnsafeMutablePointer<Int32>.allocate(capacity: self.capacity)
  }

  deinit { rows.deallocate() }
}

/// One posting list as seen by one index version: the shared list and its published length.
struct Posting: Sendable {
  private(set) var list: RowList
  private(set) var count: Int

  init() {
    list = RowList(capacity: 4)
    count = 0
  }

  /// Appends `row`; only the single writer calls this, on its own version.
  mutating func append(_ row: Int32) {
    if count == list.capacity {
      let grown = RowList(capacity: list.capacity * 2)
      grown.rows.update(from: list.rows, count: count)
      list = grown
    }
    list.rows[count] = row
    count += 1
  }

  /// The published rows.
  var buffer: UnsafeBufferPointer<Int32> { UnsafeBufferPointer(start: list.rows, count: count) }
}
