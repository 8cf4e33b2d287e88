import EngramCore

/// Vector-index ids: an owner's id and kind packed into one Int64 (`id << 2 | kind`).
enum VectorKey {
  static func make(_ kind: ItemKind, _ id: Int64) -> Int64 {
    id << 2 | Int64(kind.code)
  }

  static func split(_ key: Int64) -> (kind: ItemKind, id: Int64) {
    (ItemKind(code: UInt8(key & 3)) ?? .summary, key >> 2)
  }
}

/// Scope ids for the vector index: a stable 63-bit hash of the user scope (0 when none).
enum ScopeKey {
  static func make(_ scope: String?) -> Int64 {
    guard let scope, !scope.isEmpty else { return 0 }
    var hash: UInt64 = 0xcbf2_9ce4_8422_2325
    for byte in scope.utf8 {
      hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3
    }
    return Int64(bitPattern: hash >> 1) | 1
  }
}
