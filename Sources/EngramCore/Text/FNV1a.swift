/// FNV-1a, 64-bit: the one hash behind the project's stable keys (the intent model's feature
/// slots, the hashing embedder's, iCalendar uids, the int8 smoothing's cache key). Stable
/// across runs and machines; not for security.
package struct FNV1a: Sendable {
  /// The hash of the bytes added so far.
  package private(set) var value: UInt64 = 0xcbf2_9ce4_8422_2325

  package init() {}

  @inline(__always)
  package mutating func add(_ byte: UInt8) {
    value = (value ^ UInt64(byte)) &* 0x100_0000_01b3
  }

  package mutating func add<Bytes: Sequence<UInt8>>(_ bytes: Bytes) {
    for byte in bytes { add(byte) }
  }

  /// The hash of `bytes`.
  package static func hash<Bytes: Sequence<UInt8>>(_ bytes: Bytes) -> UInt64 {
    var hash = FNV1a()
    hash.add(bytes)
    return hash.value
  }
}
