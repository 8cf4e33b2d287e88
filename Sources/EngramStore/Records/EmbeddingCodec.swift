import CSQLite
import EngramCore

/// How an embedding's vector is stored: float32 (`f32`), or int8 with one float32 scale
/// (`i8`, written by compaction: 4x smaller, cosine error below 1e-3).
///
/// A float32 vector is stored plain (`4 * dimension` bytes) or packed (`PackedFloat32`:
/// lossless, fewer than `4 * dimension` bytes and never `4 + dimension`; SQLite writes it
/// so since migration 8). The blob length tells the three apart: `i8` is `4 + dimension`.
public enum EmbeddingCodec {
  /// The bytes SQLite stores for a float32 vector: packed when that is smaller, else plain
  /// little-endian float32.
  public static func encodeFloat32(_ vector: UnsafeBufferPointer<Float>) -> [UInt8] {
    if let packed = PackedFloat32.pack(vector) { return packed }
    var bytes = [UInt8](repeating: 0, count: 4 * vector.count)
    for (index, value) in vector.enumerated() {
      let pattern = value.bitPattern.littleEndian
      withUnsafeBytes(of: pattern) { bytes.replaceSubrange(4 * index..<4 * index + 4, with: $0) }
    }
    return bytes
  }

  /// Bytes of an `i8` vector of `dimension` components.
  public static func int8Length(dimension: Int) -> Int { 4 + dimension }

  /// Quantizes a vector: scale = max |x| / 127, values rounded to nearest.
  public static func encodeInt8(_ vector: UnsafeBufferPointer<Float>) -> [UInt8] {
    var maximum: Float = 0
    for value in vector { maximum = max(maximum, abs(value)) }
    let scale = maximum > 0 ? maximum / 127 : 1
    var bytes = [UInt8](repeating: 0, count: 4 + vector.count)
    withUnsafeBytes(of: scale.bitPattern.littleEndian) { bytes.replaceSubrange(0..<4, with: $0) }
    for (index, value) in vector.enumerated() {
      let quantized = Int8(clamping: Int((value / scale).rounded()))
      bytes[4 + index] = UInt8(bitPattern: quantized)
    }
    return bytes
  }

  /// `encodeFloat32` of the vector a plain little-endian float32 blob holds.
  public static func encodeFloat32(plain raw: UnsafeRawBufferPointer) -> [UInt8] {
    let floats = (0..<raw.count / 4).map {
      Float(bitPattern: UInt32(littleEndian: raw.loadUnaligned(fromByteOffset: 4 * $0, as: UInt32.self)))
    }
    return floats.withUnsafeBufferPointer { encodeFloat32($0) }
  }

  /// The vector `blob` holds in any encoding, or nil when it fits none.
  public static func decoded(_ blob: UnsafeRawBufferPointer, dimension: Int) -> [Float]? {
    guard dimension > 0 else { return nil }
    var ok = false
    let vector = [Float](unsafeUninitializedCapacity: dimension) { buffer, initialized in
      ok = decode(blob, dimension: dimension, into: buffer)
      initialized = ok ? dimension : 0
    }
    return ok ? vector : nil
  }

  /// Decodes a blob of either encoding (float32 plain or packed, int8) into `output` (which
  /// must hold `dimension` floats). Returns false when the blob fits none of them.
  public static func decode(
    _ blob: UnsafeRawBufferPointer, dimension: Int, into output: UnsafeMutableBufferPointer<Float>
  ) -> Bool {
    guard output.count >= dimension else { return false }
    if blob.count == 4 * dimension {
      for index in 0..<dimension {
        output[index] = Float(
          bitPattern: UInt32(littleEndian: blob.loadUnaligned(fromByteOffset: 4 * index, as: UInt32.self)))
      }
      return true
    }
    if PackedFloat32.isPackedLength(blob.count, dimension: dimension) {
      return PackedFloat32.unpack(blob, dimension: dimension, into: output)
    }
    guard blob.count == int8Length(dimension: dimension) else { return false }
    let scale = Float(
      bitPattern: UInt32(littleEndian: blob.loadUnaligned(fromByteOffset: 0, as: UInt32.self)))
    for index in 0..<dimension {
      output[index] = Float(Int8(bitPattern: blob[4 + index])) * scale
    }
    return true
  }
}

extension EmbeddingCodec {
  /// Registers `engram_pack_f32(vector, dimension)` on `db` (deterministic and innocuous,
  /// for migration 8, which packs the rows stored before it): a plain float32 blob of
  /// `dimension` components comes back as `encodeFloat32` stores it; any other value (a
  /// packed or int8 blob, NULL, a wrong length) comes back unchanged.
  static func register(on db: OpaquePointer) throws {
    let flags = SQLITE_UTF8 | SQLITE_DETERMINISTIC | SQLITE_INNOCUOUS
    let code = sqlite3_create_function_v2(
      db, "engram_pack_f32", 2, flags, nil,
      { context, _, arguments in
        guard let context, let arguments, let blobArgument = arguments[0],
          let dimensionArgument = arguments[1]
        else { return }
        let dimension = Int(sqlite3_value_int64(dimensionArgument))
        let pointer = sqlite3_value_blob(blobArgument)
        let count = Int(sqlite3_value_bytes(blobArgument))
        guard sqlite3_value_type(blobArgument) == SQLITE_BLOB, let pointer, dimension > 0,
          count == 4 * dimension
        else {
          sqlite3_result_value(context, blobArgument)
          return
        }
        let bytes = EmbeddingCodec.encodeFloat32(plain: UnsafeRawBufferPointer(start: pointer, count: count))
        bytes.withUnsafeBytes {
          engram_sqlite3_result_blob_transient(context, $0.baseAddress, Int32($0.count))
        }
      }, nil, nil, nil)
    guard code == SQLITE_OK else { throw SQLiteError.from(db, resultCode: code, sql: "engram_pack_f32") }
  }
}

extension Connection {
  /// Re-stores the given owners' float32 embeddings as int8 (already int8 ones are left as
  /// they are). Returns how many were converted.
  @discardableResult
  public func quantizeEmbeddings(ownerKind: ItemKind, ownerIDs: [Int64]) throws -> Int {
    let select = try cachedStatement(
      "SELECT id, vector, dimension FROM embeddings WHERE owner_kind = ?1 AND owner_id = ?2 AND user_id = ?3 AND encoding = 'f32'"
    )
    let update = try cachedStatement("UPDATE embeddings SET encoding = 'i8', vector = ?2 WHERE id = ?1")
    var converted = 0
    for ownerID in ownerIDs {
      try select.bind([.text(ownerKind.rawValue), .integer(ownerID), .text(user)])
      guard
        let (id, bytes) = try select.first({ row in
          let id = row.int64(at: 0)
          let dimension = row.int(at: 2)
          guard let vector = row.withBlob(at: 1, { EmbeddingCodec.decoded($0, dimension: dimension) }) else {
            throw StoreError.invalidColumnValue(table: "embeddings", column: "vector", value: "id \(id)")
          }
          return (id, vector.withUnsafeBufferPointer { EmbeddingCodec.encodeInt8($0) })
        })
      else { continue }
      try update.bind([.integer(id), .blob(bytes)])
      try update.execute()
      converted += 1
    }
    return converted
  }
}
