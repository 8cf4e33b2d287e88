import Engram
import EngramAgent
import EngramTestSupport
import Foundation
import Synchronization
import Testing

@testable import EngramCLI

/// Reminders kept with a condition about a later moment ("if it rains tomorrow, remind me
/// ..."): the built binary checks the condition when each comes due, against a loopback
/// Open-Meteo stub (`ENGRAM_WEATHER_URL`), never the network.
@Suite(.timeLimit(.minutes(5)), .watchdog) struct ConditionalRemindersTests {
  /// A loopback Open-Meteo: Lisbon is known, and every day's forecast is `code` (61 rain,
  /// 0 clear sky), the seven days from today in UTC.
  final class Forecast: Sendable {
    /// The weather code every day has.
    final class Code: Sendable {
      let value = Mutex(61)
    }
    let code = Code()
    let server: LoopbackHTTPServer

    init() throws {
      let code = self.code
      server = try LoopbackHTTPServer { request in
        let path = URLComponents(string: "http://stub" + request.path)?.path
        switch path {
        case "/v1/search":
          return .init(
            status: 200,
            body: #"{"results":[{"id":2267057,"name":"Lisbon","latitude":38.71667,"longitude":-9.13333,"#
              + #""country":"Portugal","timezone":"Europe/Lisbon"}]}"#)
        case "/v1/forecast":
          return .init(status: 200, body: Forecast.body(code: code.value.withLock { $0 }))
        default:
          return .init(status: 404, body: #"{"error":true,"reason":"not found"}"#)
        }
      }
    }

    deinit { server.stop() }

    static func body(code: Int) -> String {
      var calendar = Calendar(identifier: .gregorian)
      calendar.timeZone = .gmt
      let days = (0..<7).map { offset -> String in
        let day = calendar.date(byAdding: .day, value: offset, to: Date())!
        let parts = calendar.dateComponents([.year, .month, .day], from: day)
        return String(format: "\"%04d-%02d-%02d\"", parts.year!, parts.month!, parts.day!)
      }
      let codes = Array(repeating: String(code), count: 7).joined(separator: ",")
      return """
        {"latitude":38.72,"longitude":-9.14,"timezone":"GMT","utc_offset_seconds":0,
         "current":{"time":"2025-06-11T03:00","interval":900,"temperature_2m":18.4,"weather_code":\(code)},
         "daily":{"time":[\(days.joined(separator: ","))],
           "temperature_2m_max":[22,22,22,22,22,22,22],"temperature_2m_min":[15,15,15,15,15,15,15],
           "precipitation_probability_max":[50,50,50,50,50,50,50],"weather_code":[\(codes)]}}
        """
    }
  }

  private func openEngine(_ path: String) throws -> MemoryEngine {
    let embedder = try EngineAccess.spec(forDatabaseAt: path).makeEmbedder(
      environment: ScratchFolder.environment)
    return try MemoryEngine(path: path, configuration: EngramConfiguration(embedder: embedder))
  }

  /// "If it rains tomorrow in Lisbon", as the agent keeps it.
  private func rainTomorrow(from start: Date) -> String {
    StepCondition(
      kind: .weather, about: "rain", when: start + 86_400, place: "Lisbon",
      text: "it rains tomorrow in Lisbon"
    ).storedText
  }

  @Test func aWatcherFiresWhenTheForecastSaysRainAndNotWhenItSaysSunAcrossARestart() async throws {
    let scratch = try ScratchFolder()
    let db = try await scratch.initializedDatabase()
    let forecast = try Forecast()
    let start = Date()
    var ids: [Int64] = []
    do {
      let engine = try openEngine(db)
      defer { engine.close() }
      ids.append(
        try await engine.agentRecords.addItem(
          kind: .reminder, title: "take an umbrella", due: start + 1, condition: rainTomorrow(from: start)))
    }
    let log = scratch.path("exec.log")
    let command =
      #"printf '%s|%s\n' "$ENGRAM_REMINDER_TITLE" "$ENGRAM_REMINDER_CONDITION" >> '"# + log + "'"
    func startWatcher(_ output: String) throws -> ChildProcess {
      var environment = ProcessInfo.processInfo.environment
      environment.merge(ScratchFolder.environment) { $1 }
      environment["TZ"] = "UTC"
      environment["ENGRAM_WEATHER_URL"] = forecast.server.baseURL.absoluteString
      environment["ENGRAM_GEOCODING_URL"] = forecast.server.baseURL.absoluteString
      return try ChildProcess(
        try EngramBinary.locate().path, arguments: ["reminders", "--db", db, "--watch", "--exec", command],
        environment: environment, standardOutput: .file(scratch.path(output)),
        standardError: .file(scratch.path(output + ".err")))
    }
    @Sendable func logLines() -> [String] {
      ((try? String(contentsOfFile: log, encoding: .utf8)) ?? "").split(separator: "\n").map(String.init)
    }
    // Rain: the first fires, saying why.
    let watcher = try startWatcher("watch1.out")
    #expect(await eventually(within: .seconds(30), every: .milliseconds(100)) { logLines().count >= 1 })
    _ = await watcher.kill()
    // Sun from now on; the second comes due while no watcher runs, and the next one checks it
    // and lets it pass without firing.
    forecast.code.value.withLock { $0 = 0 }
    let engine = try openEngine(db)
    defer { engine.close() }
    ids.append(
      try await engine.agentRecords.addItem(
        kind: .reminder, title: "cover the bike", due: Date() - 1, condition: rainTomorrow(from: start)))
    let restarted = try startWatcher("watch2.out")
    let bike = ids[1]
    var delivered = false
    let deadline = ContinuousClock.now + .seconds(30)
    while !delivered, ContinuousClock.now < deadline {
      delivered = (try? await engine.agentRecords.item(bike))??.deliveredAt != nil
      if !delivered { try await Task.sleep(for: .milliseconds(100)) }
    }
    #expect(delivered)
    try await Task.sleep(for: .seconds(2))
    _ = await restarted.kill()
    let errors = ["watch1.out.err", "watch2.out.err"].map {
      (try? String(contentsOfFile: scratch.path($0), encoding: .utf8)) ?? ""
    }.joined()
    let lines = logLines()
    #expect(lines.count == 1, "watchers' standard error: \(errors)")
    #expect(lines.first?.hasPrefix("take an umbrella|because the forecast for ") == true)
    #expect(lines.first?.hasSuffix("in Lisbon says rain") == true)
    let printed =
      try String(contentsOfFile: scratch.path("watch1.out"), encoding: .utf8)
      + String(contentsOfFile: scratch.path("watch2.out"), encoding: .utf8)
    #expect(printed.contains("take an umbrella"))
    #expect(!printed.contains("cover the bike"))

    let fired = try #require(try await engine.agentRecords.item(ids[0]))
    #expect(fired.conditionOutcome?.state == .held)
    let skipped = try #require(try await engine.agentRecords.item(ids[1]))
    #expect(skipped.conditionOutcome?.state == .failed)
    #expect(skipped.conditionOutcome?.reason.hasSuffix("in Lisbon does not say rain") == true)

    // The list shows the one that did not fire, and why.
    let listed = try await EngramBinary.run(
      ["reminders", "--db", db, "--json"],
      environment: ScratchFolder.environment.merging(["TZ": "UTC"]) { $1 })
    let records = try jsonLines(listed.standardOutput)
    let listedBike = try #require(records.first { $0["title"] as? String == "cover the bike" })
    #expect(listedBike["condition"] as? String == "it rains tomorrow in Lisbon")
    #expect(listedBike["condition_outcome"] as? String == "failed")
    #expect((listedBike["condition_reason"] as? String)?.hasSuffix("does not say rain") == true)
    #expect(!records.contains { $0["title"] as? String == "take an umbrella" })
    let text = try await EngramBinary.run(
      ["reminders", "--db", db], environment: ScratchFolder.environment.merging(["TZ": "UTC"]) { $1 })
    #expect(
      text.standardOutput.contains("cover the bike (not fired: only if it rains tomorrow in Lisbon, and "))
  }

  @Test func aConditionThatCannotBeCheckedFiresWithANote() async throws {
    let scratch = try ScratchFolder()
    let db = try await scratch.initializedDatabase()
    let now = Date()
    let id: Int64
    do {
      let engine = try openEngine(db)
      defer { engine.close() }
      id = try await engine.agentRecords.addItem(
        kind: .reminder, title: "take an umbrella", due: now - 60, condition: rainTomorrow(from: now))
      try await engine.agentRecords.addItem(
        kind: .reminder, title: "later, if it rains", due: now + 3600, condition: rainTomorrow(from: now))
    }
    // Before it comes due, the list shows its condition.
    let upcoming = try await engram("reminders", "--db", db)
    #expect(upcoming.standardOutput.contains("later, if it rains (only if it rains tomorrow in Lisbon)"))
    // The weather service is down: every request is a 503.
    let down = try LoopbackHTTPServer { _ in .init(status: 503, body: "unavailable") }
    defer { down.stop() }
    var environment = ScratchFolder.environment
    environment["ENGRAM_WEATHER_URL"] = down.baseURL.absoluteString
    environment["ENGRAM_GEOCODING_URL"] = down.baseURL.absoluteString
    let delivered = try await EngramBinary.run(
      ["reminders", "--db", db, "--due", "--json"], environment: environment)
    #expect(delivered.status == 0, "\(delivered.standardError)")
    let records = try jsonLines(delivered.standardOutput)
    #expect(records.count == 1)
    #expect(records.first?["title"] as? String == "take an umbrella")
    #expect(records.first?["condition_outcome"] as? String == "unchecked")
    #expect(records.first?["condition_reason"] as? String == "the weather service could not be reached")
    let engine = try openEngine(db)
    defer { engine.close() }
    #expect(try await engine.agentRecords.item(id)?.conditionOutcome?.state == .unchecked)
  }
}
