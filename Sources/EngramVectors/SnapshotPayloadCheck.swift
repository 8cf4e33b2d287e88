import Synchronization

/// The payload checksums of a mapped snapshot (its vectors, or codes, scales and sums; and
/// the codes of the approximate tier's lists beside it), checked once, before anything
/// trusts those bytes.
///
/// An open checks the headers, the row table and the lists' row numbers only (milliseconds
/// whatever the size); the payload is what a search scores and what the int8 search's
/// exactness proof relies on. So the first search, snapshot write or vector read of an
/// index opened from a file checks the payload against the checksums its writer stored (one
/// pass over the bytes, about what one exact scan reads: 38 MB of codes at 100,000 rows of
/// 384), and every later one costs a lock. A damaged payload fails each of them with
/// `.snapshotCorrupt` (the engine then rebuilds the index from its table), never a wrong
/// answer.
final class SnapshotPayloadCheck: Sendable {
  /// One mapped region to check: `checksum(base)` must equal `expected`.
  struct Part: Sendable {
    let mapping: SnapshotMapping
    let expected: UInt64
    let checksum: @Sendable (UnsafeRawPointer) -> UInt64
  }

  enum State: Sendable {
    /// Not checked yet: the mappings are kept until they are.
    case unchecked([Part])
    case sound
    case damaged
  }

  let path: String
  private let state: Mutex<State>

  init(path: String, parts: [Part]) {
    self.path = path
    state = Mutex(.unchecked(parts))
  }

  /// Whether the payload was checked and found sound.
  var isSound: Bool {
    state.withLock { if case .sound = $0 { true } else { false } }
  }

  /// Checks the payload the first time; later calls only report the outcome.
  /// - Throws: `.snapshotCorrupt(path:reason: .checksumMismatch)` when a part differs.
  /// - Complexity: O(n · dimension) the first time (outside the lock: two first callers
  ///   may both compute it), O(1) after.
  func verify() throws(VectorIndexError) {
    let parts: [Part]
    switch state.withLock({ $0 }) {
    case .sound: return
    case .damaged: throw .snapshotCorrupt(path: path, reason: .checksumMismatch)
    case .unchecked(let unchecked): parts = unchecked
    }
    let sound = parts.allSatisfy { $0.checksum($0.mapping.base) == $0.expected }
    state.withLock { $0 = sound ? .sound : .damaged }
    guard sound else { throw .snapshotCorrupt(path: path, reason: .checksumMismatch) }
  }
}
