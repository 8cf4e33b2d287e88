import Synchronization

/// Runs work against a deadline and returns as soon as either ends, without waiting for the
/// work to notice its cancellation (URLSession on Linux may finish a cancelled request only
/// when the answer or its own timeout arrives).
enum Deadline {
  private final class Race<Value: Sendable>: Sendable {
    struct State {
      var continuation: CheckedContinuation<Value, any Error>?
      var tasks: [Task<Void, Never>] = []
      var finished = false
    }
    let state = Mutex(State())

    /// Resumes the waiting caller once, with the first result; cancels whatever still runs.
    func finish(_ result: Result<Value, any Error>) {
      let (continuation, tasks) = state.withLock { state in
        defer {
          state.continuation = nil
          state.finished = true
        }
        return (state.continuation, state.tasks)
      }
      for task in tasks { task.cancel() }
      continuation?.resume(with: result)
    }

    /// Keeps `tasks` to cancel at the end; cancels them now when the race already ended.
    func track(_ tasks: [Task<Void, Never>]) {
      let finished = state.withLock { state in
        state.tasks = tasks
        return state.finished
      }
      if finished { for task in tasks { task.cancel() } }
    }
  }

  /// The value of `operation`, or `timeoutError()` thrown once `limit` has passed, or
  /// `CancellationError` as soon as the calling task is cancelled.
  static func run<Value: Sendable>(
    limit: Duration, timeoutError: @escaping @Sendable () -> any Error,
    _ operation: @escaping @Sendable () async throws -> Value
  ) async throws -> Value {
    let race = Race<Value>()
    return try await withTaskCancellationHandler {
      try await withCheckedThrowingContinuation { continuation in
        let cancelled = race.state.withLock { state in
          state.continuation = continuation
          return state.finished
        }
        if cancelled {
          race.finish(.failure(CancellationError()))
          return
        }
        let work = Task {
          do {
            race.finish(.success(try await operation()))
          } catch {
            race.finish(.failure(error))
          }
        }
        let timer = Task {
          guard (try? await Task.sleep(for: limit)) != nil else { return }
          race.finish(.failure(timeoutError()))
        }
        race.track([work, timer])
      }
    } onCancel: {
      race.finish(.failure(CancellationError()))
    }
  }
}
