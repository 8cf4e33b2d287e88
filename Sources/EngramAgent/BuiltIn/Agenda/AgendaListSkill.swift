import Engram
import Foundation

/// `reminder.list` and `calendar.list`: the user's reminders or events in a stretch of time
/// ("which reminders are set?", "anything on my calendar Friday", "free on Sunday evening?",
/// 这周的日程). Read-only. Without a named stretch, everything upcoming (reminders also those
/// due but not yet delivered). Events listings also show the reminders due in the stretch.
public struct AgendaListSkill: Skill {
  /// What is listed.
  public let kind: AgentItemKind

  /// Creates the skill listing `kind` (`.reminder` or `.event`).
  public init(kind: AgentItemKind) { self.kind = kind == .reminder ? .reminder : .event }

  public var id: String { kind == .reminder ? "reminder.list" : "calendar.list" }
  public var displayName: String { kind == .reminder ? "List reminders" : "Show calendar" }
  public var description: String {
    kind == .reminder
      ? "Lists the user's upcoming reminders, or those in a named stretch of time (a day, a week)."
      : "Lists the user's calendar events in a named stretch of time (a day, part of a day, a week), or upcoming; says when the user is free."
  }
  public var inputSchema: SkillInputSchema {
    SkillInputSchema([
      SkillParameter(
        "at", .string, required: false,
        description:
          "the stretch of time, as said: tomorrow, Saturday afternoon, this week (default: upcoming)")
    ])
  }
  public var hasSideEffects: Bool { false }
  public var requiresConfirmation: Bool { false }
  public var retryCount: Int { 1 }
  public var category: String { "office" }
  public var tags: Set<String> { ["office", "productivity"] }

  public func extractArguments(from text: String, clock: AgentClock) -> SkillArguments {
    guard let found = AgendaWords.span(in: text, clock: clock), let range = found.range else { return [:] }
    return ["at": .string(String(text[range]))]
  }

  public func execute(arguments: SkillArguments, context: SkillContext) async throws -> SkillOutput {
    let clock = context.clock
    let language = context.language
    let written = arguments["at"]?.stringValue
    let span = written.flatMap { AgendaWords.span(in: $0, clock: clock)?.span }
    var items: [AgentItem]
    if let span {
      items = try await context.agenda.agenda(kind: kind, from: span.lowerBound, to: span.upperBound)
      if kind == .event {
        items += try await context.agenda.agenda(kind: .reminder, from: span.lowerBound, to: span.upperBound)
        items.sort { ($0.dueAt ?? .distantPast, $0.id ?? 0) < ($1.dueAt ?? .distantPast, $1.id ?? 0) }
      }
    } else {
      // Upcoming; for reminders also those already due that were never delivered.
      items = try await context.agenda.agenda(kind: kind, from: nil, to: nil).filter { item in
        (item.dueAt ?? .distantPast) >= clock.now || (kind == .reminder && item.deliveredAt == nil)
      }
    }
    let limit = 50
    let shown = Array(items.prefix(limit))
    let lines = shown.map {
      AgendaWords.line($0, clock: clock, language: language, marksReminders: kind == .event)
    }
    let stretch = written.map { Self.describe($0, span: span, clock: clock, language: language) }
    guard !shown.isEmpty else {
      return .text(emptyText(stretch: stretch, language: language))
    }
    var title = heading(stretch: stretch, count: items.count, language: language)
    if items.count > limit {
      title += language == .english ? " (the first \(limit))" : "（前 \(limit) 条）"
    }
    return .agenda(title: title, ids: shown.compactMap(\.id), lines: lines)
  }

  private func heading(stretch: String?, count: Int, language: MessageLanguage) -> String {
    switch (kind, language) {
    case (.reminder, .english):
      return stretch.map { "Your reminders \($0):" } ?? "Your upcoming reminders (\(count)):"
    case (.reminder, .chinese):
      return stretch.map { "\($0)的提醒：" } ?? "你接下来的提醒（\(count) 条）："
    case (_, .english):
      return stretch.map { "On your calendar \($0):" } ?? "Coming up on your calendar (\(count)):"
    case (_, .chinese):
      return stretch.map { "\($0)的日程：" } ?? "接下来的日程（\(count) 项）："
    }
  }

  private func emptyText(stretch: String?, language: MessageLanguage) -> String {
    switch (kind, language) {
    case (.reminder, .english):
      return stretch.map { "You have no reminders \($0)." } ?? "You have no reminders coming up."
    case (.reminder, .chinese):
      return stretch.map { "\($0)没有提醒。" } ?? "你接下来没有提醒。"
    case (_, .english):
      return stretch.map { "Nothing on your calendar \($0): you're free." }
        ?? "Nothing coming up on your calendar."
    case (_, .chinese):
      return stretch.map { "\($0)没有日程，你有空。" } ?? "接下来没有日程。"
    }
  }

  /// The stretch as the user said it, with its dates: `tomorrow (2025-06-12)`.
  static func describe(_ written: String, span: Range<Date>?, clock: AgentClock, language: MessageLanguage)
    -> String
  {
    guard let span else { return written }
    let calendar = clock.calendar
    func day(_ date: Date) -> String {
      let parts = calendar.dateComponents([.year, .month, .day], from: date)
      return String(format: "%04d-%02d-%02d", parts.year!, parts.month!, parts.day!)
    }
    let lastInstant = span.upperBound.addingTimeInterval(-1)
    let dates =
      calendar.isDate(span.lowerBound, inSameDayAs: lastInstant)
      ? day(span.lowerBound) : "\(day(span.lowerBound)) – \(day(lastInstant))"
    let phrase = written.trimmingCharacters(in: .whitespaces)
    return language == .english ? "\(phrase) (\(dates))" : "\(phrase)（\(dates)）"
  }
}
