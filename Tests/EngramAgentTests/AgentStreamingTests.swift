import EngramTestSupport
import Foundation
import Observation
import Synchronization
import Testing

@testable import EngramAgent

/// Records every value of `agent.streamingText` it is told about through Observation.
@MainActor
final class StreamingTextRecorder {
  private(set) var values: [String] = []
  private let agent: Agent
  private var stopped = false
  /// Called with each new non-empty value.
  var onText: (String) -> Void = { _ in }

  init(_ agent: Agent) {
    self.agent = agent
    observe()
  }

  private func observe() {
    guard !stopped else { return }
    let text = withObservationTracking {
      agent.streamingText
    } onChange: {
      Task { @MainActor [weak self] in self?.observe() }
    }
    if values.last != text {
      values.append(text)
      if !text.isEmpty { onText(text) }
    }
  }

  func stop() { stopped = true }
}

/// A read-only skill that reports partial text, waits on a gate, reports more: `report progress`.
struct ReportingSkill: PhraseRuledSkill {
  let gate: Gate
  /// Opened once the last report is made.
  var reported = Gate()
  var id: String { "test.report" }
  var displayName: String { "Report progress" }
  var description: String { "Reports its progress while it works." }
  var samplePhrases: [String] { ["report progress"] }
  var inputSchema: SkillInputSchema { .empty }
  var hasSideEffects: Bool { false }
  var requiresConfirmation: Bool { false }
  var timeout: Duration { .seconds(120) }
  func canHandle(_ text: String) -> Bool { text.contains("report progress") }
  func extractArguments(from text: String, clock: AgentClock) -> SkillArguments { SkillArguments() }
  func execute(arguments: SkillArguments, context: SkillContext) async throws -> SkillOutput {
    context.partial.append("working")
    context.partial.append("…")
    await gate.wait()
    context.partial.append(" more")
    reported.open()
    return .text("working… more, done")
  }
}

@MainActor
@Suite(.timeLimit(.minutes(5)), .watchdog) struct AgentStreamingTests {
  static let answer = "Zebras have stripes; 斑马有条纹 🦓. \"Quoted\"\nand a second line."

  /// The planner's reply for `answer`, cut into deltas of 5 characters, in pieces of 23
  /// bytes; the last part is the whole end of the stream (the finish event and `[DONE]`), so
  /// the reply cannot be complete before it arrives.
  static func parts() throws -> [[UInt8]] {
    let json = try JSONSerialization.data(withJSONObject: ["final": answer])
    let reply = String(decoding: json, as: UTF8.self)
    var deltas: [String] = []
    var rest = Substring(reply)
    while !rest.isEmpty {
      deltas.append(String(rest.prefix(5)))
      rest = rest.dropFirst(5)
    }
    let body = ChatCompletionStream.body(deltas)
    let end = ChatCompletionStream.finishEvent + ChatCompletionStream.done
    return ChatCompletionStream.pieces(String(body.dropLast(end.count)), size: 23) + [Array(end.utf8)]
  }

  @Test func streamingTextGrowsWhileThePlannerStreamsAndIsEmptyAfterwards() async throws {
    let harness = try AgentHarness()
    let parts = try Self.parts()
    let release = DispatchSemaphore(value: 0)
    let waited = Mutex<DispatchTimeoutResult?>(nil)
    var response = LoopbackHTTPServer.Response.streamed(parts: parts, pauseSeconds: 0.005)
    // The end of the reply waits until the agent has shown some of it.
    response.beforePart = { index in
      if index == parts.count - 1 { waited.withLock { $0 = release.wait(timeout: .now() + 60) } }
    }
    let server = try StubHTTPServer(responses: [response])
    defer { server.stop() }
    let client = try OpenAIChatClient(
      configuration: .init(baseURL: server.baseURL, model: "m"), environment: [:])
    let agent = try await harness.agent(
      router: SkillRouter(registry: harness.registry),
      planner: Planner(model: client, registry: harness.registry))
    let recorder = StreamingTextRecorder(agent)
    defer { recorder.stop() }
    recorder.onText = { _ in release.signal() }
    let states = StateRecorder(agent)
    defer { states.stop() }

    let state = await (try? agent.send("zebra quantum marmalade")) ?? .idle
    guard case .finished(let reply) = state else {
      Issue.record("expected a reply, got \(state)")
      return
    }
    #expect(reply.text == Self.answer)
    #expect(reply.route == .planner)
    #expect(agent.streamingText == "")
    #expect(waited.withLock { $0 } == .success, "partial text was shown before the reply was complete")
    // Observation may coalesce changes that arrive together (a loaded machine delivers
    // several parts at once): at least one partial text is shown before the end (checked by
    // `waited` above), and whatever is shown only grows.
    let shown = recorder.values.filter { !$0.isEmpty }
    #expect(!shown.isEmpty, "\(recorder.values)")
    for (earlier, later) in zip(shown, shown.dropFirst()) {
      #expect(later.count > earlier.count && later.hasPrefix(earlier), "grows: \(earlier) -> \(later)")
    }
    for text in shown { #expect(Self.answer.hasPrefix(text), "\(text)") }
    #expect(recorder.values.first == "" && recorder.values.last == "", "empty before and after the turn")
  }

  @Test func theNonStreamingModelStillAnswersThroughThePlanner() async throws {
    let harness = try AgentHarness()
    let planner = Planner(model: FixedReplyModel(reply: #"{"final": "Hello!"}"#), registry: harness.registry)
    let agent = try await harness.agent(router: SkillRouter(registry: harness.registry), planner: planner)
    let updates = agent.streamingTextUpdates()
    let seen = Task { @MainActor in
      var values: [String] = []
      for await text in updates {
        values.append(text)
        if text == "Hello!" { break }
      }
      return values
    }
    let state = await (try? agent.send("zebra quantum marmalade")) ?? .idle
    guard case .finished(let reply) = state else {
      Issue.record("expected a reply, got \(state)")
      return
    }
    #expect(reply.text == "Hello!")
    #expect(agent.streamingText == "")
    // The whole answer came as one delta; whether it was seen before the turn ended depends on
    // scheduling, so only what was seen is checked.
    seen.cancel()
    for text in await seen.value { #expect("Hello!".hasPrefix(text)) }
  }

  /// Waits (on the main actor, letting other work run) until `condition` holds; false after a
  /// minute (only so that a broken build fails instead of hanging; nothing asserts how long).
  func eventually(_ condition: () -> Bool) async -> Bool {
    // Generous: while the whole suite runs, tests that wait for child processes can hold the
    // cooperative pool's few threads for minutes. The deadline only stops a broken build.
    let deadline = ContinuousClock.now + .seconds(600)
    while !condition() {
      guard ContinuousClock.now < deadline else { return false }
      try? await Task.sleep(for: .milliseconds(1))
    }
    return true
  }

  @Test func aSkillReportsPartialTextThroughItsContextAndEachTurnStartsEmpty() async throws {
    let gate = Gate()
    let harness = try AgentHarness(extraSkills: [ReportingSkill(gate: gate)])
    let agent = try await harness.agent(router: SkillRouter(registry: harness.registry))
    let recorder = StreamingTextRecorder(agent)
    defer { recorder.stop() }
    let turn = Task { @MainActor in try await agent.send("report progress please") }
    #expect(await eventually { agent.streamingText == "working…" }, "\(recorder.values)")
    guard case .executing(let skillID, _, _) = agent.state else {
      Issue.record("expected executing, got \(agent.state)")
      return
    }
    #expect(skillID == "test.report")
    gate.open()
    for state in [try await turn.value, try await agent.send("report progress again")] {
      guard case .finished(let reply) = state else {
        Issue.record("expected a reply, got \(state)")
        return
      }
      #expect(reply.text == "working… more, done")
      #expect(agent.streamingText == "")
    }
    #expect(await eventually { recorder.values.last == "" })
    // The second turn started from nothing, not from the first turn's text.
    for text in recorder.values { #expect("working… more".hasPrefix(text), "\(text)") }
    #expect(recorder.values.contains("working…"))
  }

  @Test func stoppingATurnClearsTheTextAndLateReportsAreDropped() async throws {
    let gate = Gate()
    let reported = Gate()
    let harness = try AgentHarness(extraSkills: [ReportingSkill(gate: gate, reported: reported)])
    let agent = try await harness.agent(router: SkillRouter(registry: harness.registry))
    let turn = Task { @MainActor in try await agent.send("report progress") }
    #expect(await eventually { agent.streamingText == "working…" })
    #expect(await agent.cancel())
    #expect(agent.streamingText == "")
    // The stopped skill goes on and reports " more": the report belongs to no current turn.
    gate.open()
    _ = try await turn.value
    await reported.wait()
    for _ in 0..<100 { await Task.yield() }
    #expect(agent.streamingBuffer.text == "working…")
    #expect(agent.streamingText == "")
  }

  @Test func aMalformedStreamedAnswerIsWithdrawnBeforeTheRetry() async throws {
    let harness = try AgentHarness()
    let model = ScriptedModel([#"{"final": "draft", "extra": 1}"#, #"{"final": "clean"}"#])
    let updates = Mutex<[PartialOutput.Update]>([])
    let planned = try await Planner(model: model, registry: harness.registry).plan(
      request: "x", context: "", partial: PartialOutput { update in updates.withLock { $0.append(update) } })
    #expect(planned.action == .final("clean"))
    #expect(planned.attempts == 2)
    #expect(updates.withLock { $0 } == [.append("draft"), .reset, .append("clean")])
  }

  @Test func skillAndPlanRepliesReportNothing() async throws {
    let harness = try AgentHarness()
    let model = ScriptedModel([#"{"skill": "time.now", "arguments": {}}"#])
    let updates = Mutex<[PartialOutput.Update]>([])
    _ = try await Planner(model: model, registry: harness.registry).plan(
      request: "x", context: "", partial: PartialOutput { update in updates.withLock { $0.append(update) } })
    #expect(updates.withLock { $0 }.isEmpty)
  }
}
