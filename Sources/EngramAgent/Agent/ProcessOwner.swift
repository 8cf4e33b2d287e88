import Foundation
import Synchronization

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// Which agent asked a confirmation: its pending calls carry the owner in their execution id
/// (`<uuid>@<pid>.<start time>.<agent>`), so an agent starting on the same memory (in another
/// process or this one) cancels only the calls of agents that are gone, never those of a live
/// chat waiting for its user.
enum ProcessOwner {
  /// This process: its pid and (on Linux) its start time, which tells a reused pid apart.
  static let process = "\(getpid()).\(startTime(of: getpid()) ?? 0)"

  /// The agents of this process that are alive, by token.
  private static let liveAgents = Mutex<Set<String>>([])

  /// Registers a live agent of this process; returns its token.
  static func register() -> String {
    let token = UUID().uuidString
    liveAgents.withLock { _ = $0.insert(token) }
    return token
  }

  /// Forgets an agent that has ended.
  static func unregister(_ token: String) { liveAgents.withLock { _ = $0.remove(token) } }

  /// The execution id to store with a pending call of `execution` asked by agent `token`.
  static func tag(_ execution: UUID, agent token: String) -> String {
    "\(execution.uuidString)@\(process).\(token)"
  }

  /// The owner recorded in `executionID`, or nil for ids written without one.
  static func owner(ofExecution executionID: String) -> String? {
    guard let at = executionID.lastIndex(of: "@") else { return nil }
    return String(executionID[executionID.index(after: at)...])
  }

  /// Whether the agent `owner` names is still running (an unreadable owner is not).
  static func isAlive(_ owner: String) -> Bool {
    let parts = owner.split(separator: ".")
    guard parts.count == 3, let pid = Int32(parts[0]), let start = UInt64(parts[1]), pid > 0 else {
      return false
    }
    if "\(parts[0]).\(parts[1])" == process {
      return liveAgents.withLock { $0.contains(String(parts[2])) }
    }
    guard kill(pid, 0) == 0 || errno == EPERM else { return false }
    guard start != 0, let actual = startTime(of: pid) else { return true }
    return actual == start
  }

  /// The start time of `pid` in clock ticks since boot (field 22 of /proc/PID/stat), where
  /// procfs exists.
  static func startTime(of pid: Int32) -> UInt64? {
    guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
      let close = stat.lastIndex(of: ")")
    else { return nil }
    // Fields after the command name start at field 3.
    let fields = stat[stat.index(after: close)...].split(separator: " ")
    guard fields.count > 19 else { return nil }
    return UInt64(fields[19])
  }
}
