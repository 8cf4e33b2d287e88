import Dispatch

/// Runs blocking work (SQLite statements, BLAS products) on threads of its own, off Swift
/// concurrency's cooperative pool, whose few threads must never wait: the layers that
/// block (the engine's database work, the embedder's forward pass) await it instead of
/// running inline, as GRDB does with its database queues.
public enum BlockingWork {
  /// A concurrent queue: independent blocking jobs (a search's keyword candidates and a
  /// write) run side by side; SQLite's own locks and the store's single writer order them.
  static let queue = DispatchQueue(label: "engram.blocking", qos: .userInitiated, attributes: .concurrent)

  /// Runs `body` on the blocking queue and returns its value (or rethrows its error).
  public static func run<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
      queue.async { continuation.resume(with: Result { try body() }) }
    }
  }

  /// Runs non-throwing `body` on the blocking queue and returns its value.
  public static func run<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T {
    await withCheckedContinuation { continuation in
      queue.async { continuation.resume(returning: body()) }
    }
  }
}
