import Engram
import EngramAgent
import EngramCore
import Foundation

/// `engram reminders`: lists reminders, delivers the due ones, or watches for them.
public enum RemindersCommand: Command {
  /// The command's declaration.
  public static let configuration = CommandConfiguration(
    commandName: "reminders", abstract: "List reminders, deliver the due ones, or watch for them.",
    discussion: """
      Without options, lists the reminders still to come (and those due but never
      delivered), soonest first. --due lists the reminders that are due and were never
      delivered and marks them delivered, so nothing shows them again (--peek lists them
      and leaves them). --watch stays running and prints each reminder when it comes due
      (checking every second), running --exec CMD for each with /bin/sh, its environment
      holding ENGRAM_REMINDER_ID, ENGRAM_REMINDER_TITLE, ENGRAM_REMINDER_DUE (ISO 8601) and
      ENGRAM_REMINDER_BODY; e.g. --exec 'notify-send "$ENGRAM_REMINDER_TITLE"'. A reminder
      is marked delivered in the same transaction that finds it, before it is printed: two
      watchers (or a watcher and `engram chat`) never show one twice, and a watcher stopped
      and started again shows the ones that came due meanwhile, once. Ctrl-C ends --watch.
      """,
    usage: "reminders [--db PATH] [--due [--peek] | --watch [--exec CMD]] [--now ISO8601] [--json]")

  /// The command's options.
  public struct Options: ParsableOptions {
    @OptionGroup var database: DatabaseOptions
    @Flag(help: "Only the reminders due and never delivered; marks them delivered.") var due = false
    @Flag(help: "With --due: list them without marking them delivered.") var peek = false
    @Flag(help: "Keep running; print each reminder as it comes due.") var watch = false
    @Option(valueName: "CMD", help: "With --watch: run CMD (with /bin/sh) for each reminder.") var exec:
      String?
    @Option(valueName: "ISO8601", help: ArgumentHelp.now) var now: String?
    @Flag(help: ArgumentHelp.json) var json = false

    /// The defaults.
    public init() {}
  }

  /// Lists, delivers or watches.
  public static func run(_ options: Options, context: CommandContext) async throws {
    let clock = try RouteCommand.clock(from: options.now)
    let (due, peek, watch, exec) = (options.due, options.peek, options.watch, options.exec)
    if peek && !due { throw UsageError("--peek applies only with --due") }
    if exec != nil && !watch { throw UsageError("--exec applies only with --watch") }
    if watch && due {
      throw UsageError("--watch and --due do not go together (--watch delivers as they come due)")
    }
    if watch && options.now != nil {
      throw UsageError("--watch follows the real clock; --now would never let a reminder come due")
    }
    let json = options.json
    let writer = ReminderWriter(context: context, json: json, timeZone: clock.timeZone)
    if watch {
      Interruption.install()
      defer { Interruption.uninstall() }
      try await EngineAccess.withEngine(context) { engine in
        try await Self.watch(engine, writer: writer, exec: exec, environment: context.environment)
      }
      return
    }
    let now = clock.now
    let items = try await EngineAccess.withEngine(context, mode: due && !peek ? .readWrite : .readOnly) {
      engine in
      try await BlockingWork.run { () throws -> [AgentItem] in
        if due && !peek { return try engine.agentRecords.deliverDueReminders(at: now) }
        if due {
          return try engine.agentRecords.agenda(
            kind: .reminder, to: now.addingTimeInterval(0.001), undeliveredOnly: true)
        }
        return try engine.agentRecords.agenda(kind: .reminder).filter { item in
          (item.dueAt ?? .distantPast) >= now || item.deliveredAt == nil
        }
      }
    }
    if items.isEmpty && !json {
      context.error.write(due ? "no reminders are due\n" : "no reminders to come\n")
      return
    }
    for item in items { try writer.write(item, now: now) }
  }

  /// Delivers due reminders every second until interrupted.
  static func watch(
    _ engine: MemoryEngine, writer: ReminderWriter, exec: String?, environment: [String: String]
  ) async throws {
    while !Interruption.isRequested {
      let now = Date()
      let due = try await BlockingWork.run { try engine.agentRecords.deliverDueReminders(at: now) }
      for item in due {
        try writer.write(item, now: now)
        if let exec {
          let status = try await ShellCommand.run(
            exec, environment: environment.merging(writer.environment(for: item)) { $1 })
          if status != 0 {
            writer.context.error.write("--exec exited with status \(status) for reminder #\(item.id ?? 0)\n")
          }
        }
      }
      try? await Task.sleep(for: .seconds(1))
    }
  }
}

/// Writes reminders and events as lines of text or JSON.
struct ReminderWriter {
  let context: CommandContext
  let json: Bool
  let timeZone: TimeZone

  /// One item: `#12  2025-06-17 09:00 (Tue)  call the dentist` or a JSON object.
  func write(_ item: AgentItem, now: Date) throws {
    if json {
      try context.jsonLines.write(Record(item, timeZone: timeZone))
    } else {
      context.output.write(ReminderRendering.line(item, timeZone: timeZone, now: now) + "\n")
    }
  }

  /// The environment `--exec` sees for `item`.
  func environment(for item: AgentItem) -> [String: String] {
    [
      "ENGRAM_REMINDER_ID": String(item.id ?? 0), "ENGRAM_REMINDER_TITLE": item.title,
      "ENGRAM_REMINDER_DUE": item.dueAt.map { DateParser.iso8601($0, timeZone: timeZone) } ?? "",
      "ENGRAM_REMINDER_BODY": item.body ?? "",
    ]
  }

  /// The JSON form of an item.
  struct Record: Encodable {
    var id: Int64
    var kind: String
    var title: String
    var body: String?
    var due: String?
    var deliveredAt: String?

    init(_ item: AgentItem, timeZone: TimeZone) {
      id = item.id ?? 0
      kind = item.kind.rawValue
      title = item.title
      body = item.body
      due = item.dueAt.map { DateParser.iso8601($0, timeZone: timeZone) }
      deliveredAt = item.deliveredAt.map { DateParser.iso8601($0, timeZone: timeZone) }
    }

    enum CodingKeys: String, CodingKey {
      case id, kind, title, body, due
      case deliveredAt = "delivered_at"
    }
  }
}

/// How reminders and events read on a terminal.
enum ReminderRendering {
  /// `#12  2025-06-17 09:00 (Tue)  call the dentist` (with `(late 2h)` for one delivered well
  /// after it was due).
  static func line(_ item: AgentItem, timeZone: TimeZone, now: Date) -> String {
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
    return line
  }
}

/// Runs a shell command line without blocking a cooperative thread.
enum ShellCommand {
  /// Runs `command` with `/bin/sh -c` and `environment`; returns its exit status (128 + the
  /// signal when it was killed).
  /// - Throws: the error of starting it.
  static func run(_ command: String, environment: [String: String]) async throws -> Int32 {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/bin/sh")
    process.arguments = ["-c", command]
    process.environment = environment
    try process.run()
    // The wait runs on a BlockingWork thread of its own, never a cooperative one.
    return await BlockingWork.run {
      process.waitUntilExit()
      return process.terminationReason == .uncaughtSignal
        ? 128 + process.terminationStatus : process.terminationStatus
    }
  }
}
