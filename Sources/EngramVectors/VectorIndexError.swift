/// Why a vector index operation was refused. The index is unchanged after any of these.
public enum VectorIndexError: Error, Sendable, Equatable {
  /// The configured dimension is not positive (or too large).
  case invalidDimension(Int)
  /// A vector has the wrong number of components; `id` is nil for a query.
  case dimensionMismatch(id: Int64?, expected: Int, actual: Int)
  /// A component is NaN or infinite; `id` is nil for a query.
  case nonFiniteComponent(id: Int64?, index: Int)
  /// A vector has zero norm and cannot be normalized; `id` is nil for a query.
  case zeroVector(id: Int64?)
  /// `k` must be at least 1.
  case invalidK(Int)
  /// An id is already present (add) or repeated within one batch.
  case duplicateID(Int64)
  /// The ids, metadata and flat vector buffer of a batch disagree in length.
  case batchShapeMismatch(ids: Int, metadata: Int, components: Int)
  /// The index cannot hold more rows (row numbers are 32-bit).
  case capacityExceeded(requested: Int)
  /// A configuration value is out of range.
  case invalidConfiguration(field: String, value: Int)
  /// A snapshot file could not be read or written (`errno` from the C library).
  case snapshotIO(path: String, errno: Int32)
  /// A snapshot file is damaged or not a snapshot.
  case snapshotCorrupt(path: String, reason: SnapshotCorruption)
  /// A snapshot was written for another store state; rebuild from the store.
  case snapshotStale(path: String, expected: UInt64, found: UInt64)
  /// A snapshot holds vectors of another dimension than the caller expects.
  case snapshotDimensionMismatch(path: String, expected: Int, found: Int)
  /// Float32 rows the index does not hold (it was opened from a snapshot of int8 codes)
  /// could not be read from its `FloatRowSource`, or it has none.
  case floatRowsUnavailable(reason: String)
}

/// What is wrong with a damaged snapshot file.
public enum SnapshotCorruption: Sendable, Equatable {
  /// The file does not start with the snapshot magic bytes.
  case badMagic
  /// The format version is not one this build reads.
  case unsupportedVersion(UInt32)
  /// The header's fields are out of range.
  case invalidHeader
  /// The file length disagrees with the header.
  case lengthMismatch(expected: Int, actual: Int)
  /// The payload checksum does not match.
  case checksumMismatch
  /// The payload decodes to invalid rows (duplicate id, unknown kind).
  case invalidRow(index: Int)
}
