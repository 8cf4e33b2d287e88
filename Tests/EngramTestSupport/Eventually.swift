import EngramCore
import Foundation

/// Looks at `condition` every `interval` until it holds or `limit` has passed, then once more;
/// returns whether it held. The looking runs on a thread of ``BlockingWork``'s, so the deadline
/// is measured there and not by when the awaiting task is next scheduled, which under the full
/// parallel run on two cooperative threads can be seconds late (docs/concurrency.md).
public func eventually(
  within limit: Duration, every interval: Duration = .milliseconds(5),
  _ condition: @escaping @Sendable () -> Bool
) async -> Bool {
  let pause = Double(interval.components.seconds) + Double(interval.components.attoseconds) * 1e-18
  return await BlockingWork.run {
    let deadline = ContinuousClock.now.advanced(by: limit)
    while ContinuousClock.now < deadline {
      if condition() { return true }
      Thread.sleep(forTimeInterval: pause)
    }
    return condition()
  }
}
