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
      delivered, and those of the last week whose condition kept them from firing), soonest
      first; a reminder kept with a condition ("if it rains on Saturday") shows it, and is
      checked when it comes due: it fires when the condition holds (or cannot be checked,
      with a note saying so) and is delivered without firing when it does not. --due lists the reminders that are due and were never
      delivered and marks them delivered, so nothing shows them again (--peek lists them
      and leaves them). --watch stays running and prints each reminder when it comes due
      (checking every second), running --exec CMD for each with /bin/sh, its environment
      holding ENGRAM_REMINDER_ID, ENGRAM_REMINDER_TITLE, ENGRAM_REMINDER_DUE (ISO 8601) and
      ENGRAM_REMINDER_BODY (each text cut to 16 KiB; ENGRAM_REMINDER_TRIMMED=1 when one was),
      ENGRAM_REMINDER_CONDITION for a conditional one (why it fired)
      and ENGRAM_REMINDER_FILE, a private file holding the whole reminder as JSON; e.g.
      --exec 'notify-send "$ENGRAM_REMINDER_TITLE"'. Each reminder is claimed (marked
      delivered) on its own just before it is printed: two watchers (or a watcher and
      `engram chat`) never show one twice, a watcher stopped and started again shows the ones
      that came due meanwhile, once, and a command that fails is reported on standard error
      while watching goes on. Ctrl-C ends --watch.
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
    let environment = context.environment
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
    if due && !peek {
      // Each reminder is claimed as it is printed (ReminderDelivery), not all up front.
      let delivered = try await EngineAccess.withEngine(context) { engine in
        try await engine.reminders.deliver(
          at: now,
          conditions: ReminderConditions(engine: engine, environment: environment, timeZone: clock.timeZone)
        ) { try writer.write($0, now: now) }
      }
      if delivered.isEmpty && !json { context.error.write("no reminders are due\n") }
      return
    }
    let items = try await EngineAccess.withEngine(context, mode: .readOnly) { engine in
      if due { return try await engine.reminders.due(at: now) }
      // Also those that came due in the last week and did not fire (their condition failed).
      let weekAgo = now.addingTimeInterval(-7 * 86_400)
      return try await engine.agentRecords.agenda(kind: .reminder).filter { item in
        let due = item.dueAt ?? .distantPast
        return due >= now || item.deliveredAt == nil
          || (item.conditionOutcome?.fired == false && due >= weekAgo)
      }
    }
    if items.isEmpty && !json {
      context.error.write(due ? "no reminders are due\n" : "no reminders to come\n")
      return
    }
    for item in items { try writer.write(item, now: now) }
  }

  /// Delivers due reminders every second until interrupted: each is printed, then its
  /// `--exec` command runs, and only then is the next one claimed (`ReminderDelivery`). A
  /// command that cannot start or fails is a sentence on standard error; watching goes on.
  static func watch(
    _ engine: MemoryEngine, writer: ReminderWriter, exec: String?, environment: [String: String]
  ) async throws {
    let conditions = ReminderConditions(engine: engine, environment: environment, timeZone: writer.timeZone)
    while !Interruption.isRequested {
      _ = try await engine.reminders.deliver(at: Date(), conditions: conditions) { item in
        try writer.write(item, now: Date())
        guard let exec else { return }
        let id = item.id ?? 0
        do {
          let status = try await ReminderCommand.run(
            exec, for: item, writer: writer, environment: environment)
          if status != 0 {
            writer.context.error.write("reminders: --exec exited with status \(status) for reminder #\(id)\n")
          }
        } catch let failure as ReminderCommand.Failure {
          writer.context.error.write(
            "reminders: --exec could not run for reminder #\(id): \(failure.reason)\n")
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

  /// The JSON form of an item.
  struct Record: Encodable {
    var id: Int64
    var kind: String
    var title: String
    var body: String?
    var due: String?
    var deliveredAt: String?
    var condition: String?
    var conditionOutcome: String?
    var conditionReason: String?

    init(_ item: AgentItem, timeZone: TimeZone) {
      id = item.id ?? 0
      kind = item.kind.rawValue
      title = item.title
      body = item.body
      due = item.dueAt.map { DateParser.iso8601($0, timeZone: timeZone) }
      deliveredAt = item.deliveredAt.map { DateParser.iso8601($0, timeZone: timeZone) }
      condition = item.condition.map { _ in ReminderRendering.conditionText(item) ?? "" }
      conditionOutcome = item.conditionOutcome?.state.rawValue
      conditionReason = item.conditionOutcome?.reason
    }

    enum CodingKeys: String, CodingKey {
      case id, kind, title, body, due, condition
      case deliveredAt = "delivered_at"
      case conditionOutcome = "condition_outcome"
      case conditionReason = "condition_reason"
    }
  }
}

/// Runs `--exec` for one reminder, without blocking a cooperative thread.
///
/// The command sees the reminder in its environment: `ENGRAM_REMINDER_ID`,
/// `ENGRAM_REMINDER_TITLE`, `ENGRAM_REMINDER_DUE` (ISO 8601), `ENGRAM_REMINDER_BODY`, each text
/// trimmed to ``maxValueBytes`` (a system refuses to start a program with an environment string
/// over 128 KiB on Linux, 1 MiB in all on macOS), `ENGRAM_REMINDER_TRIMMED=1` when one was, and
/// `ENGRAM_REMINDER_FILE`: a file (mode 0600, removed when the command ends) holding the whole
/// reminder as one JSON object, as `engram reminders --json` prints it.
enum ReminderCommand {
  /// The most bytes of one reminder text the environment carries (cut at a character).
  static let maxValueBytes = 16_384

  /// Why a command could not run: a sentence.
  struct Failure: Error {
    let reason: String
  }

  /// Runs `command` with `/bin/sh -c` for `item`; returns its exit status (128 + the signal
  /// when it was killed).
  /// - Throws: `Failure` when the reminder's file cannot be written or the command cannot start.
  static func run(
    _ command: String, for item: AgentItem, writer: ReminderWriter, environment: [String: String]
  )
    async throws(Failure) -> Int32
  {
    let json: Data
    do {
      let encoder = JSONEncoder()
      encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
      json = try encoder.encode(ReminderWriter.Record(item, timeZone: writer.timeZone))
    } catch {
      throw Failure(reason: "the reminder could not be written as JSON")
    }
    let file = try writeFile(json + Data("\n".utf8))
    defer { unlink(file) }
    var values = self.environment(for: item, timeZone: writer.timeZone)
    values["ENGRAM_REMINDER_FILE"] = file
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/bin/sh")
    process.arguments = ["-c", command]
    process.environment = environment.merging(values) { $1 }
    do {
      try process.run()
    } catch {
      throw Failure(reason: "the system would not start /bin/sh" + Self.cause(of: error))
    }
    // The wait runs on a BlockingWork thread of its own, never a cooperative one.
    return await BlockingWork.run {
      process.waitUntilExit()
      return process.terminationReason == .uncaughtSignal
        ? 128 + process.terminationStatus : process.terminationStatus
    }
  }

  /// ` (the reason)` for an error that carries a POSIX code, else "".
  static func cause(of error: any Error) -> String {
    let underlying = (error as NSError).userInfo[NSUnderlyingErrorKey] as? NSError
    for candidate in [error as NSError, underlying].compactMap({ $0 })
    where candidate.domain == NSPOSIXErrorDomain {
      return " (" + String(cString: strerror(Int32(candidate.code))) + ")"
    }
    return ""
  }

  /// The reminder's variables, each text cut to ``maxValueBytes``.
  static func environment(for item: AgentItem, timeZone: TimeZone) -> [String: String] {
    let title = trimmed(item.title)
    let body = trimmed(item.body ?? "")
    var values = [
      "ENGRAM_REMINDER_ID": String(item.id ?? 0), "ENGRAM_REMINDER_TITLE": title.text,
      "ENGRAM_REMINDER_DUE": item.dueAt.map { DateParser.iso8601($0, timeZone: timeZone) } ?? "",
      "ENGRAM_REMINDER_BODY": body.text,
    ]
    if let note = ReminderRendering.conditionNote(item) { values["ENGRAM_REMINDER_CONDITION"] = note }
    if title.cut || body.cut { values["ENGRAM_REMINDER_TRIMMED"] = "1" }
    return values
  }

  /// `text` cut to at most ``maxValueBytes`` UTF-8 bytes at a character boundary (ending with
  /// `…` when cut), and whether it was.
  static func trimmed(_ text: String) -> (text: String, cut: Bool) {
    guard text.utf8.count > maxValueBytes else { return (text, false) }
    let ellipsis = "…"
    var result = ""
    var length = 0
    for character in text {
      let width = character.utf8.count
      if length + width + ellipsis.utf8.count > maxValueBytes { break }
      result.append(character)
      length += width
    }
    return (result + ellipsis, true)
  }

  /// Writes `data` to a new private file in the temporary folder; returns its path.
  static func writeFile(_ data: Data) throws(Failure) -> String {
    let folder = ProcessInfo.processInfo.environment["TMPDIR"].flatMap { $0.isEmpty ? nil : $0 } ?? "/tmp"
    var template = Array((folder + "/engram-reminder-XXXXXX").utf8CString)
    let descriptor = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
    guard descriptor >= 0 else {
      throw Failure(
        reason: "no file could be made in \(folder) for the reminder (\(String(cString: strerror(errno))))")
    }
    defer { close(descriptor) }
    let path = template.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
    let written = data.withUnsafeBytes { buffer -> Bool in
      var offset = 0
      while offset < buffer.count {
        let count = write(descriptor, buffer.baseAddress! + offset, buffer.count - offset)
        if count < 0 && errno == EINTR { continue }
        guard count > 0 else { return false }
        offset += count
      }
      return true
    }
    guard written else {
      unlink(path)
      throw Failure(reason: "the reminder's file in \(folder) could not be written")
    }
    return path
  }
}
