import Foundation
import Synchronization

/// Progress of a long command on standard error: a redrawn bar on a terminal, else one summary line.
///
/// Safe to update from any task; redraws are throttled to `minimumInterval`.
public final class ProgressBar: Sendable {
  private struct State {
    var done = 0
    var lastDraw: Double = -.infinity
    var finished = false
  }

  /// The word shown before the bar (`ingest`).
  public let label: String
  /// The number of units expected, or `nil` when unknown.
  public let total: Int?
  private let output: any TextOutput
  private let isInteractive: Bool
  private let width: Int
  private let minimumInterval: Double
  private let now: @Sendable () -> Double
  private let start: Double
  private let state = Mutex(State())

  /// Creates a progress bar.
  /// - Parameters:
  ///   - isInteractive: Whether `output` is a terminal; otherwise only ``finish()`` writes.
  ///   - now: Seconds on a monotonic clock (injectable for tests).
  public init(
    label: String, total: Int?, output: any TextOutput, isInteractive: Bool,
    width: Int = Terminal.defaultWidth,
    minimumInterval: Double = 0.1, now: @escaping @Sendable () -> Double = ProgressBar.monotonicSeconds
  ) {
    self.label = label
    self.total = total
    self.output = output
    self.isInteractive = isInteractive
    self.width = width
    self.minimumInterval = minimumInterval
    self.now = now
    self.start = now()
  }

  /// A bar on standard error of `context`, drawn only when standard error is a terminal.
  public convenience init(label: String, total: Int?, context: CommandContext) {
    self.init(
      label: label, total: total, output: context.error, isInteractive: context.terminal.isErrorTerminal,
      width: context.terminal.width)
  }

  /// Seconds since an arbitrary point, from a monotonic clock.
  public static func monotonicSeconds() -> Double {
    Double(DispatchTime.now().uptimeNanoseconds) / 1e9
  }

  /// Records `count` more units done.
  public func advance(by count: Int = 1) {
    let done = state.withLock { state in
      state.done += count
      return state.done
    }
    update(done: done)
  }

  /// Records that `done` units are done; redraws if the last redraw is old enough.
  public func update(done: Int) {
    guard isInteractive else {
      state.withLock { $0.done = done }
      return
    }
    let time = now()
    let line: String? = state.withLock { state in
      state.done = done
      guard !state.finished, time - state.lastDraw >= minimumInterval else { return nil }
      state.lastDraw = time
      return Self.line(label: label, done: done, total: total, elapsed: time - start, width: width)
    }
    // Clear to the end of the line so a shorter line leaves no residue.
    if let line { output.write("\r" + line + "\u{1B}[K") }
  }

  /// Ends the bar: replaces it with the summary line (or writes just the summary off a terminal).
  public func finish() {
    let time = now()
    let summary: String? = state.withLock { state in
      guard !state.finished else { return nil }
      state.finished = true
      return Self.summary(label: label, done: state.done, elapsed: time - start)
    }
    guard let summary else { return }
    output.write((isInteractive ? "\r\u{1B}[K" : "") + summary + "\n")
  }

  /// `label [=====>    ] 120/500  24%  81/s  ETA 0:05`, fitted to `width - 1` columns.
  public static func line(label: String, done: Int, total: Int?, elapsed: Double, width: Int) -> String {
    let rate = elapsed > 0 ? Double(done) / elapsed : 0
    var tail: [String] = []
    var fraction: Double?
    if let total, total > 0 {
      let ratio = min(1, max(0, Double(done) / Double(total)))
      fraction = ratio
      tail.append("\(done)/\(total)")
      tail.append("\(Int((ratio * 100).rounded(.down)))%")
    } else {
      tail.append("\(done)")
    }
    tail.append(formatRate(rate))
    if let total, total > 0 {
      let remaining = Double(max(0, total - done))
      tail.append("ETA " + (rate > 0 ? formatClock(remaining / rate) : "--:--"))
    }
    let tailText = tail.joined(separator: "  ")
    let available = width - 1
    guard let fraction else {
      return TextWidth.truncate(label + "  " + tailText, toWidth: available)
    }
    // Room for the bar between the label and the figures, with brackets and two spaces each side.
    let barWidth = min(40, available - TextWidth.width(of: label) - TextWidth.width(of: tailText) - 6)
    guard barWidth >= 5 else { return TextWidth.truncate(label + "  " + tailText, toWidth: available) }
    let filled = Int((fraction * Double(barWidth)).rounded(.down))
    var bar = String(repeating: "=", count: filled)
    if filled < barWidth {
      bar += ">" + String(repeating: " ", count: barWidth - filled - 1)
    }
    return "\(label) [\(bar)]  \(tailText)"
  }

  /// `ingest: 5000 done in 6.1s (812/s)`.
  public static func summary(label: String, done: Int, elapsed: Double) -> String {
    let rate = elapsed > 0 ? Double(done) / elapsed : 0
    let time = elapsed < 60 ? String(format: "%.1fs", max(0, elapsed)) : formatClock(elapsed)
    return "\(label): \(done) done in \(time) (\(formatRate(rate)))"
  }

  /// `0.5/s`, `81/s`, `12.3k/s`, `4.1M/s`.
  public static func formatRate(_ perSecond: Double) -> String {
    guard perSecond.isFinite, perSecond > 0 else { return "0/s" }
    if perSecond < 10 { return String(format: "%.1f/s", perSecond) }
    if perSecond < 10_000 { return "\(Int(perSecond.rounded()))/s" }
    if perSecond < 10_000_000 { return String(format: "%.1fk/s", perSecond / 1_000) }
    return String(format: "%.1fM/s", perSecond / 1_000_000)
  }

  /// `0:05`, `12:30`, `1:02:03` (hours only when needed).
  public static func formatClock(_ seconds: Double) -> String {
    guard seconds.isFinite, seconds >= 0, seconds < 360_000_000 else { return "--:--" }
    let total = Int(seconds.rounded(.up))
    let hours = total / 3_600
    let minutes = (total % 3_600) / 60
    let secs = total % 60
    let twoDigits = { (value: Int) in value < 10 ? "0\(value)" : "\(value)" }
    if hours > 0 { return "\(hours):\(twoDigits(minutes)):\(twoDigits(secs))" }
    return "\(minutes):\(twoDigits(secs))"
  }
}
