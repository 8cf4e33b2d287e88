import Engram
import EngramAgent
import EngramEmbeddings
import Foundation

/// The arguments of the agenda, time-zone and weather skills on their frozen split
/// (`Benchmarks/data/agent-eval-skills.jsonl`, acting on the agenda of
/// `agent-eval-agenda.json`), each scored with the gold skill so a routing mistake does not
/// count twice:
/// - `target_accuracy`: cancel and update requests find the item meant (an agenda id), ask
///   which one when several fit equally (`ambiguous`), or say nothing matches (`none`);
///   `last` is the item the conversation last showed.
/// - `new_time_accuracy`: update requests with a found item move it to `when`.
/// - `zone_accuracy`: `time.now` reads the IANA zone of the place named (none when none is).
/// - `city_accuracy` and `day_accuracy`: `weather.current` reads the city and the day.
/// - `list_day_accuracy`: listings about one day cover that day.
extension AgentSuite {
  /// One item of the agenda the split acts on.
  struct AgendaEntry: Decodable {
    var id: String
    var kind: String
    var title: String
    var when: String
  }

  static func iso(_ text: String) -> Date? {
    let formatter = ISO8601DateFormatter()
    formatter.formatOptions = [.withInternetDateTime]
    return formatter.date(from: text)
  }

  static func measureSkillArguments(
    _ requests: [Request], agendaPath: String, clock: AgentClock, into report: inout BenchReport
  ) async throws {
    let agenda: [AgendaEntry]
    do {
      agenda = try JSONDecoder().decode(
        [AgendaEntry].self, from: Data(contentsOf: URL(fileURLWithPath: agendaPath)))
    } catch {
      throw BenchError("cannot read the agenda \(agendaPath) (a JSON array; pass --agenda)")
    }
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent(
      "engram-bench-agenda-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: folder) }
    let engine = try MemoryEngine(
      path: folder.appendingPathComponent("memory.sqlite").path,
      configuration: EngramConfiguration(embedder: try HashingEmbedder(dimension: 64)))
    defer { engine.close() }
    var ids: [String: Int64] = [:]
    for entry in agenda {
      guard let due = iso(entry.when) else { throw BenchError("agenda item \(entry.id): bad time") }
      ids[entry.id] = try await engine.agentRecords.addItem(
        kind: entry.kind == "event" ? .event : .reminder, title: entry.title, due: due, at: clock.now)
    }
    var target = (correct: 0, total: 0)
    var newTime = (correct: 0, total: 0)
    var zone = (correct: 0, total: 0)
    var city = (correct: 0, total: 0)
    var day = (correct: 0, total: 0)
    var listDay = (correct: 0, total: 0)
    let skills = Dictionary(uniqueKeysWithValues: BuiltInSkills.all().map { ($0.id, $0) })
    let calendar = clock.calendar
    func sameDay(_ date: Date?, _ gold: String) -> Bool {
      guard let date else { return false }
      let parts = calendar.dateComponents([.year, .month, .day], from: date)
      let goldDay =
        gold == "today"
        ? calendar.dateComponents([.year, .month, .day], from: clock.now)
        : iso(gold + "T12:00:00+00:00").map { _ in
          let pieces = gold.split(separator: "-").compactMap { Int($0) }
          return DateComponents(year: pieces[0], month: pieces[1], day: pieces[2])
        } ?? DateComponents()
      return parts.year == goldDay.year && parts.month == goldDay.month && parts.day == goldDay.day
    }
    for request in requests {
      guard let skill = skills[request.label] else { continue }
      let arguments = skill.extractArguments(from: request.text, clock: clock)
      switch request.label {
      case "reminder.cancel", "calendar.cancel", "reminder.update", "calendar.update":
        guard let gold = request.target else { continue }
        target.total += 1
        let recent = request.last.flatMap { ids[$0] }.map { [$0] } ?? []
        let context = SkillContext(userText: request.text, clock: clock, engine: engine, recentItems: recent)
        let prepared: SkillPreparation
        do {
          let validated = try ArgumentValidator.validate(
            arguments, against: skill.inputSchema, timeZone: clock.timeZone)
          prepared = try await skill.prepare(arguments: validated, context: context)
        } catch {
          continue
        }
        switch (gold, prepared) {
        case ("ambiguous", .ask(let parameter, _, _)) where parameter == "target": target.correct += 1
        case ("none", .reply): target.correct += 1
        case (_, .ready(let ready)):
          guard let id = ids[gold], ready["id"]?.intValue == Int(id) else { break }
          target.correct += 1
          if let when = request.when, request.label.hasSuffix(".update") {
            newTime.total += 1
            if let gold = iso(when), let date = ready["when"]?.dateValue,
              abs(date.timeIntervalSince(gold)) < 1
            {
              newTime.correct += 1
            }
          }
        default: break
        }
        if request.label.hasSuffix(".update"), request.when != nil, ids[gold] != nil,
          !(prepared.isReady)
        {
          newTime.total += 1
        }
      case "time.now":
        zone.total += 1
        if arguments["zone"]?.stringValue == request.zone { zone.correct += 1 }
      case "weather.current":
        if let gold = request.city {
          city.total += 1
          let said = arguments["city"]?.stringValue
          let known = said.flatMap(PlaceDirectory.lookup)?.name(in: .english)
          if normalized(known ?? said ?? "") == normalized(gold) { city.correct += 1 }
        } else {
          city.total += 1
          if arguments["city"] == nil { city.correct += 1 }
        }
        if let gold = request.day {
          day.total += 1
          if sameDay(arguments["day"]?.dateValue ?? (gold == "today" ? clock.now : nil), gold) {
            day.correct += 1
          }
        }
      case "calendar.list", "reminder.list":
        guard let gold = request.day else { continue }
        listDay.total += 1
        let said = arguments["at"]?.stringValue
        let span = said.flatMap { DateExpressionParser(clock: clock).parse($0)?.span(in: calendar) }
        if let span, sameDay(span.lowerBound, gold) || sameDay(span.upperBound.addingTimeInterval(-1), gold) {
          listDay.correct += 1
        }
      default: continue
      }
    }
    var result = BenchReport()
    for (name, count) in [
      ("target", target), ("new_time", newTime), ("zone", zone), ("city", city), ("day", day),
      ("list_day", listDay),
    ] {
      result.set("\(name)_accuracy", ratio(count.correct, count.total))
      result.set("\(name)_items", count.total)
    }
    report.set("skill_arguments", result)
  }
}

extension SkillPreparation {
  var isReady: Bool {
    if case .ready = self { return true }
    return false
  }
}
