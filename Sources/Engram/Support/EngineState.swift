import EngramCore
import EngramStore
import Foundation
import Synchronization

/// Whether the engine is still open: the one thing every part of it shares. A part checks it
/// before it works; `MemoryEngine.close()` marks it closed.
final class OpenState: Sendable {
  private let closed = Mutex(false)

  /// Marks the engine closed; returns whether it already was.
  func markClosed() -> Bool {
    closed.withLock { closed in
      defer { closed = true }
      return closed
    }
  }

  /// Whether the engine was closed.
  var isClosed: Bool { closed.withLock { $0 } }

  /// - Throws: `EngramError.closed` once the engine is closed.
  func check() throws(EngramError) {
    if isClosed { throw .closed }
  }
}

/// Text checks shared by the parts that accept user text.
enum TextChecks {
  /// Whether `text` is empty or only `CharacterSet.whitespacesAndNewlines`, without
  /// building a trimmed copy (ASCII, the common case, skips the set lookup).
  static func isBlank(_ text: String) -> Bool {
    text.unicodeScalars.allSatisfy { scalar in
      scalar.isASCII
        ? scalar == " " || (0x09...0x0D).contains(scalar.value)
        : CharacterSet.whitespacesAndNewlines.contains(scalar)
    }
  }
}

/// The speakers of the conversation log, read once and kept until a write may change them
/// (hybrid search boosts turns of the one speaker a query names).
final class SpeakerDirectory: Sendable {
  let store: StoreRole<any ItemQueries>
  /// Lowercased name -> name as written; nil until read, or after a write.
  private let names = Mutex<[String: String]?>(nil)

  init(store: StoreRole<any ItemQueries>) {
    self.store = store
  }

  /// Forgets the cached names (a turn with a speaker was added or removed).
  func invalidate() {
    names.withLock { $0 = nil }
  }

  /// The known single-word speaker names, read from the store when not cached.
  func known() throws -> [String: String] {
    if let cached = names.withLock({ $0 }) { return cached }
    let all = try store.readTransaction { try $0.distinctSpeakers() }
    var map: [String: String] = [:]
    for name in all where !name.isEmpty && !name.contains(" ") {
      map[name.lowercased()] = name
    }
    names.withLock { $0 = map }
    return map
  }
}
