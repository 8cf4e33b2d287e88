import Engram
import Foundation

/// How reminders and events read in one line: on a terminal, in the web app, in an MCP
/// tool's text (shared, so a reminder says the same wherever it is delivered).
public enum ReminderRendering {
  /// `#12  2025-06-17 09:00 (Tue)  call the dentist` (with `(late 2h)` for one delivered well
  /// after it was due).
  public static func line(_ item: AgentItem, timeZone: TimeZone, now: Date) -> String {
    var calendar = Calendar(identifier: .gregorian)
    calendar.timeZone = timeZone
    let when =
      item.dueAt.map { due -> String in
        let parts = calendar.dateComponents([.year, .month, .day, .hour, .minute, .weekday], from: due)
        let weekday = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"][parts.weekday! - 1]
        return String(
          format: "%04d-%02d-%02d %02d:%02d", parts.year!, parts.month!, parts.day!, parts.hour!,
          parts.minute!)
          + " (\(weekday))"
      } ?? "(no date)"
    var line = "#\(item.id ?? 0)  \(when)  \(item.title)"
    if let body = item.body, !body.isEmpty { line += " — \(body)" }
    if let due = item.dueAt, now.timeIntervalSince(due) >= 3600 {
      line += " (late \(Int(now.timeIntervalSince(due) / 3600))h)"
    }
    if let note = conditionNote(item) { line += " (\(note))" }
    return line
  }

  /// The words of a reminder's condition as the user said them ("it snows on Saturday"), or
  /// nil for none (or one that cannot be read).
  public static func conditionText(_ item: AgentItem) -> String? {
    item.condition.flatMap(StepCondition.init(storedText:))?.text
  }

  /// "only if …" or "unless …": which way the reminder's condition runs it.
  static func conditionPhrase(_ item: AgentItem) -> String {
    item.condition.flatMap(StepCondition.init(storedText:))?.phrase(.english) ?? "only if a condition"
  }

  /// What a reminder's condition says on its line: `only if …` before it comes due, then
  /// `because …` (it fired), `not fired: …` (it did not) or `fired unchecked: …`.
  public static func conditionNote(_ item: AgentItem) -> String? {
    guard item.condition != nil else { return nil }
    let text = conditionText(item) ?? "a condition"
    switch item.conditionOutcome {
    case nil: return conditionPhrase(item)
    case let outcome? where outcome.state == .held: return "because \(outcome.reason)"
    case let outcome? where outcome.state == .failed:
      return "not fired: \(conditionPhrase(item)), and \(outcome.reason)"
    case let outcome?: return "fired without its condition “\(text)”: \(outcome.reason)"
    }
  }
}
