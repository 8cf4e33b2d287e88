import Engram
import EngramAgent
import EngramCore
import Foundation

/// `engram calendar`: lists calendar events in a range.
public enum CalendarCommand: Command {
  /// The command's declaration.
  public static let configuration = CommandConfiguration(
    commandName: "calendar", abstract: "List calendar events in a range.",
    discussion: """
      Lists the events from --from (default: now) until --to (default: no end), soonest
      first. A date is ISO 8601 (2025-06-12, 2025-06-12T15:00:00+08:00) or what you would
      say to the assistant ("tomorrow", "next friday", 下周一); a day alone means its start
      for --from and its end for --to. --now fixes the clock. At most --limit events are
      listed (default 1000); when more fall in the range, a line on standard error says so.
      """,
    usage: "calendar [--db PATH] [--from D] [--to D] [--limit N] [--now ISO8601] [--json]")

  /// The command's options.
  public struct Options: ParsableOptions {
    @OptionGroup var database: DatabaseOptions
    @Option(valueName: "D", help: "The first day or instant (default: now).") var from: String?
    @Option(valueName: "D", help: "The last day, or the instant to stop before (default: none).") var to:
      String?
    @Option(valueName: "N", help: "List at most N events (default: 1000).") var limit = 1000
    @Option(valueName: "ISO8601", help: ArgumentHelp.now) var now: String?
    @Flag(help: ArgumentHelp.json) var json = false

    /// The defaults.
    public init() {}
  }

  /// Lists the events.
  public static func run(_ options: Options, context: CommandContext) async throws {
    let clock = try RouteCommand.clock(from: options.now)
    let from = try options.from.map { try bound($0, option: "--from", end: false, clock: clock) }
    let to = try options.to.map { try bound($0, option: "--to", end: true, clock: clock) }
    if let from, let to, to <= from {
      throw UsageError("--to must come after --from")
    }
    let limit = options.limit
    guard limit >= 1 else {
      throw UsageError(
        .invalidValue(argument: "--limit", value: String(limit), expected: "a whole number of at least 1"))
    }
    let start = from ?? clock.now
    // One more than asked: whether the listing stops early.
    let found = try await EngineAccess.withEngine(context, mode: .readOnly) { engine in
      try await engine.agentRecords.agenda(
        kind: .event, from: start, to: to, limit: limit == Int.max ? limit : limit + 1)
    }
    let items = found.prefix(limit)
    let json = options.json
    if items.isEmpty && !json {
      context.error.write("no events in that range\n")
      return
    }
    let writer = ReminderWriter(context: context, json: json, timeZone: clock.timeZone)
    for item in items { try writer.write(item, now: start) }
    if found.count > limit {
      context.error.write(
        "calendar: listed the first \(limit) events; more fall in that range (--limit N lists more)\n")
    }
  }

  /// The instant a `--from`/`--to` value names: ISO 8601, or a date expression read against
  /// `clock` (a day alone is its start, or for `--to` the start of the next day).
  static func bound(_ text: String, option: String, end: Bool, clock: AgentClock) throws(UsageError) -> Date {
    if let parsed = DateParser.parse(text, timeZone: clock.timeZone) {
      return end && parsed.isWholeDay ? parsed.end : parsed.date
    }
    guard let match = DateExpressionParser(clock: clock).parse(text),
      match.range.lowerBound == text.startIndex || text[..<match.range.lowerBound].allSatisfy(\.isWhitespace)
    else {
      throw UsageError(
        .invalidValue(
          argument: option, value: text, expected: "a date: 2025-06-12, an ISO 8601 instant, or 'tomorrow'"))
    }
    let span = match.span(in: clock.calendar)
    return end ? span.upperBound : span.lowerBound
  }
}
