import Foundation
import Observation
import Synchronization

/// The partial reply text of one execution (see `Agent.streamingText`).
struct StreamingBuffer {
  /// The execution the text belongs to; nil before the first turn reports anything.
  var execution: UUID?
  /// The text reported so far.
  var text = ""
  /// Carries reports from any thread to the main actor, in order.
  var relay: StreamingRelay?
}

extension Agent {
  /// The text of the reply the running turn is producing, as it arrives: the language model's
  /// `final` answer token by token, or what a skill reports through `SkillContext.partial`.
  ///
  /// Empty when no turn runs: it reads "" as soon as a turn starts (until something is
  /// reported) and again once the turn finishes, fails or waits for confirmation; the finished
  /// reply is in `state`. Observable: it changes on the main actor with every batch of partial
  /// text and with every state change (see also `streamingTextUpdates()`).
  public var streamingText: String {
    guard state.isRunning, let execution = streamingBuffer.execution, execution == currentExecution else {
      return ""
    }
    return streamingBuffer.text
  }

  /// A stream of `streamingText` each time it may have changed (the current value first),
  /// for consumers without Observation; values that come faster than they are read are
  /// coalesced to the newest. The stream ends when the consumer stops iterating.
  public func streamingTextUpdates() -> AsyncStream<String> {
    let (stream, continuation) = AsyncStream.makeStream(of: String.self, bufferingPolicy: .bufferingNewest(1))
    Self.track(self, into: continuation)
    return stream
  }

  /// Yields the current text and registers for its next change (Observation calls back once).
  private static func track(_ agent: Agent, into continuation: AsyncStream<String>.Continuation) {
    let text = withObservationTracking {
      agent.streamingText
    } onChange: { [weak agent] in
      // Called before the change is made: read the new value once the main actor is free.
      Task { @MainActor in
        guard let agent else { return continuation.finish() }
        track(agent, into: continuation)
      }
    }
    if case .terminated = continuation.yield(text) { return }
  }

  /// Where execution `execution` reports partial text; its reports change `streamingText` on
  /// the main actor, in the order they were made, while `execution` is current. The first call
  /// for an execution starts its text empty.
  func streamingOutput(for execution: UUID) -> PartialOutput {
    if streamingBuffer.execution != execution || streamingBuffer.relay == nil {
      streamingBuffer = StreamingBuffer(execution: execution, text: "", relay: StreamingRelay())
    }
    let relay = streamingBuffer.relay!
    return PartialOutput { [weak self] update in
      guard relay.enqueue(update, for: execution) else { return }
      Task { @MainActor in self?.applyStreaming(relay.takeAll()) }
    }
  }

  /// Applies a batch of reports, each to the buffer of its execution while that execution is
  /// current (one Observation change per batch).
  func applyStreaming(_ batch: [(execution: UUID, update: PartialOutput.Update)]) {
    guard let execution = streamingBuffer.execution, isCurrent(execution) else { return }
    var text = streamingBuffer.text
    for (owner, update) in batch where owner == execution {
      switch update {
      case .append(let delta): text += delta
      case .reset: text = ""
      }
    }
    if text != streamingBuffer.text { streamingBuffer.text = text }
  }
}

/// Queues partial-text reports from any thread for the main actor, in order: a report that
/// finds no drain pending asks for one, and that drain takes everything queued by then, so
/// reports are never reordered and a burst costs one hop to the main actor.
final class StreamingRelay: Sendable {
  private struct Queue {
    var updates: [(execution: UUID, update: PartialOutput.Update)] = []
    var drainScheduled = false
  }

  private let queue = Mutex(Queue())

  /// Queues `update`; true when the caller must schedule a drain (`takeAll` on the main actor).
  func enqueue(_ update: PartialOutput.Update, for execution: UUID) -> Bool {
    queue.withLock { queue in
      queue.updates.append((execution, update))
      guard !queue.drainScheduled else { return false }
      queue.drainScheduled = true
      return true
    }
  }

  /// Everything queued so far, in order; the next report schedules a new drain.
  func takeAll() -> [(execution: UUID, update: PartialOutput.Update)] {
    queue.withLock { queue in
      defer {
        queue.updates.removeAll()
        queue.drainScheduled = false
      }
      return queue.updates
    }
  }
}
