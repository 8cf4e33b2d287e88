import Engram
import EngramAgent
import EngramCore
import Foundation

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// One `engram chat` conversation: reads lines, hands requests to the agent, draws its states,
/// asks before side effects, and prints replies.
///
/// On a terminal it prompts on standard error, draws the agent's state (`planning…`) on
/// standard error while it works, and asks `[y/N]` before side effects. With piped standard
/// input it reads one request per line, prints each reply on one line of standard output (a
/// waiting side effect prints its confirmation text as a line, and the next input line answers
/// it with `y` or `n`), and ends cleanly at end of input.
///
/// A reply that streams in (the language model's answer) is written to standard output as it
/// arrives, and at the end only what is left of it, so the output is the reply exactly once.
///
/// Ctrl-C while the agent works stops the turn; Ctrl-C at the prompt arms leaving, and a second
/// Ctrl-C leaves (the command exits 130). Ctrl-D (end of input) leaves with status 0.
@MainActor
public final class ChatSession {
  /// The agent the conversation talks to.
  public let agent: Agent
  /// Whether standard input is a terminal: prompts and questions on standard error, multi-line replies.
  public let isInteractive: Bool
  private let output: any TextOutput
  private let error: any TextOutput
  private let input: LineReader
  private let terminal: Terminal
  private let showsStatus: Bool
  /// Whether to wait for input with `poll` on standard input before reading (see `nextLine`).
  private let pollsStandardInput: Bool
  private var statusShown = false
  /// A Ctrl-C was handled since the last line; the next one at the prompt leaves.
  private var interruptArmed = false
  /// The part of the current reply already written while it streamed in.
  private var partialReply: PartialReplyPrinter

  /// How long the status spinner waits between frames (and Ctrl-C is looked for while the agent works).
  static let tick = Duration.milliseconds(80)

  /// Whether each turn's prompt context is printed (on standard error) before its reply.
  private let showContext: Bool
  /// `agent.contextsBuilt` when the context was last printed.
  private var contextPrinted = 0

  /// Creates a session over `agent` with the command's streams; with `showContext`, each
  /// turn's prompt context and its token count are printed before the reply.
  public init(agent: Agent, context: CommandContext, showContext: Bool = false) {
    self.showContext = showContext
    self.contextPrinted = agent.contextsBuilt
    self.agent = agent
    self.output = context.output
    self.error = context.error
    self.input = context.input
    self.terminal = context.terminal
    self.isInteractive = context.input.showsPrompt
    self.showsStatus = context.terminal.isErrorTerminal
    self.pollsStandardInput = context.terminal.isInputTerminal && context.input.showsPrompt
    self.partialReply = PartialReplyPrinter(folds: !context.input.showsPrompt)
  }

  /// Runs the conversation until `/quit` or end of input.
  /// - Throws: ``InterruptedError`` after a second Ctrl-C at the prompt; ``CommandFailure`` when
  ///   standard input cannot be read.
  public func run() async throws {
    if let notice = agent.startupNotice {
      error.write(TextStyle.yellow.apply(to: notice, enabled: terminal.colorsError) + "\n")
      agent.dismissNotice()
    }
    if isInteractive {
      error.write(
        TextStyle.dim.apply(
          to: "engram chat on \(agent.engine.path): /help for commands, /quit or Ctrl-D to leave",
          enabled: terminal.colorsError) + "\n")
    }
    let prompt = TextStyle.bold.apply(to: "> ", enabled: terminal.colorsError)
    await deliverDueReminders()
    while true {
      let line: String?
      do {
        line = try await nextLine(prompt: prompt)
      } catch LineReaderError.interrupted {
        Interruption.reset()
        if interruptArmed {
          if isInteractive { error.write("\n") }
          throw InterruptedError()
        }
        interruptArmed = true
        error.write("\n(Ctrl-C again or Ctrl-D to leave)\n")
        continue
      } catch LineReaderError.invalidUTF8(let number) {
        error.write("line \(number) is not valid UTF-8; skipped\n")
        continue
      } catch LineReaderError.readFailed(let code) {
        throw CommandFailure("cannot read standard input (errno \(code))")
      }
      guard let line else {
        if isInteractive { error.write("\n") }
        return
      }
      let text = line.trimmingCharacters(in: .whitespaces)
      guard !text.isEmpty else { continue }
      interruptArmed = false
      // A Ctrl-C that came while a piped read was blocked is not a request to stop the next turn.
      Interruption.reset()
      if text.hasPrefix("/") {
        if !(await runSlashCommand(text)) { return }
        continue
      }
      partialReply.restart()
      let result = await perform { agent in
        do throws(AgentError) { return .success(try await agent.send(text)) } catch { return .failure(error) }
      }
      if !(await conclude(result)) { return }
      await deliverDueReminders()
    }
  }

  // MARK: - Reminders

  /// When due reminders were last looked for.
  private var remindersCheckedAt = ContinuousClock.now

  /// How often a chat waiting at its prompt looks for reminders that came due.
  static let reminderInterval = Duration.seconds(15)

  /// Shows the reminders that are due and were never delivered, marking them delivered (so
  /// no other chat or watcher shows them again). A store error is shown once as a line;
  /// the conversation goes on.
  private func deliverDueReminders() async {
    remindersCheckedAt = .now
    let engine = agent.engine
    let now = agent.configuration.clock.now
    let conditions = ReminderConditions(engine: engine, timeZone: agent.configuration.clock.timeZone)
    let due: [AgentItem]
    do {
      // A conditional reminder is checked first: one whose condition failed is not shown.
      due = try await engine.reminders.deliver(at: now, conditions: conditions)
    } catch {
      self.error.write("reminders: \(EngineAccess.describe(error))\n")
      return
    }
    guard !due.isEmpty else { return }
    let clock = agent.configuration.clock
    clearStatus()
    for item in due {
      let line = "⏰ " + ReminderRendering.line(item, timeZone: clock.timeZone, now: now)
      output.write(TextStyle.yellow.apply(to: line, enabled: terminal.colorsOutput) + "\n")
    }
  }

  // MARK: - Turns

  private enum Event: Sendable {
    case tick
    case state(AgentState)
    case partial(String)
    case done(Result<AgentState, AgentError>)
  }

  /// Runs one agent call, drawing its states as they change; Ctrl-C cancels the turn and
  /// returns the agent's state at once (the stopped turn's late result is dropped by the agent).
  private func perform(
    _ work: @escaping @MainActor @Sendable (Agent) async -> Result<AgentState, AgentError>
  ) async -> Result<AgentState, AgentError> {
    let (events, continuation) = AsyncStream.makeStream(of: Event.self)
    let states = agent.stateUpdates()
    let agent = self.agent
    let partials = agent.streamingTextUpdates()
    let forward = Task { @MainActor in
      for await state in states { continuation.yield(.state(state)) }
    }
    let forwardPartials = Task { @MainActor in
      for await text in partials { continuation.yield(.partial(text)) }
    }
    let ticker = Task {
      while !Task.isCancelled {
        try? await Task.sleep(for: Self.tick)
        continuation.yield(.tick)
      }
    }
    Task { @MainActor in continuation.yield(.done(await work(agent))) }
    defer {
      forward.cancel()
      forwardPartials.cancel()
      ticker.cancel()
      continuation.finish()
      clearStatus()
    }
    var frame = 0
    var label = ChatRendering.statusLabel(for: agent.state)
    var stopRequested = false
    for await event in events {
      printContextIfNew()
      switch event {
      case .done(let result):
        return result
      case .state(let state):
        label = ChatRendering.statusLabel(for: state)
      case .partial(let text):
        if let piece = partialReply.update(text) {
          clearStatus()
          output.write(piece)
        }
      case .tick:
        frame += 1
        if Interruption.isRequested {
          Interruption.reset()
          interruptArmed = true
          stopRequested = true
        }
        // Retried each tick: a Ctrl-C just before the turn starts running has nothing to stop yet.
        if stopRequested, await agent.cancel() { return .success(agent.state) }
      }
      // The status line would overwrite the reply being written on the same screen line.
      if let label, !partialReply.isShowing { drawStatus(label, frame: frame) }
    }
    return .success(agent.state)
  }

  /// Shows the end of a turn, asking for confirmation as often as the turn needs it.
  /// Returns false when the session should end (input ended during a question).
  private func conclude(_ first: Result<AgentState, AgentError>) async -> Bool {
    var result = first
    while true {
      let state: AgentState
      switch result {
      case .failure(let failure):
        error.write(Self.describe(failure) + "\n")
        return true
      case .success(let value):
        state = value
      }
      guard case .waitingForConfirmation(let action) = state else {
        // The language model failed and memory answered: say so on standard error, one line.
        if case .finished(let reply) = state, let notice = reply.notice {
          error.write(TextStyle.yellow.apply(to: notice, enabled: terminal.colorsError) + "\n")
        }
        if let reply = ChatRendering.replyText(for: state) { printReply(reply) }
        return true
      }
      let answer = await ask(action)
      switch answer {
      case .yes:
        result = await perform { agent in
          do throws(AgentError) { return .success(try await agent.confirm()) } catch {
            return .failure(error)
          }
        }
      case .no, .interrupted, .endOfInput:
        if answer == .interrupted { interruptArmed = true }
        // Declining finishes the turn with "cancelled, nothing changed"; the pending call is
        // marked cancelled now rather than at the next start.
        result = await perform { agent in
          _ = await agent.cancel()
          return .success(agent.state)
        }
        if answer == .endOfInput {
          if case .success(let state) = result, let reply = ChatRendering.replyText(for: state) {
            printReply(reply)
          }
          return false
        }
      }
    }
  }

  private enum Answer {
    case yes, no, interrupted, endOfInput
  }

  /// Shows the exact confirmation text and reads `y` or `n` (an empty line is no).
  private func ask(_ action: PendingAction) async -> Answer {
    output.write(partialReply.interrupt())
    let prompt: String
    if isInteractive {
      prompt = TextStyle.yellow.apply(to: action.confirmationText, enabled: terminal.colorsError) + " [y/N] "
    } else {
      // A script's transcript shows what its next line answers.
      output.write(action.confirmationText + "\n")
      prompt = ""
    }
    while true {
      do {
        guard let line = try await nextLine(prompt: prompt) else {
          if isInteractive { error.write("\n") }
          return .endOfInput
        }
        if let answer = LineReader.answer(line) { return answer ? .yes : .no }
      } catch LineReaderError.interrupted {
        Interruption.reset()
        if isInteractive { error.write("\n") }
        return .interrupted
      } catch LineReaderError.invalidUTF8 {
        // Not an answer; ask again.
      } catch {
        return .endOfInput
      }
      error.write("Please answer y or n.\n")
    }
  }

  /// Shows `prompt` (on a terminal) and reads a line.
  ///
  /// On a terminal the wait happens here, in slices that leave the main actor free, because
  /// Ctrl-C may be delivered to any thread of the process and then does not interrupt a read
  /// blocked on the main thread; the flag it sets is seen within one slice. A terminal in
  /// canonical mode hands over one whole line per read, so nothing waits in the reader's buffer
  /// while `poll` says there is nothing to read.
  /// - Throws: `LineReaderError.interrupted` when Ctrl-C was pressed while waiting.
  private func nextLine(prompt: String) async throws(LineReaderError) -> String? {
    if input.showsPrompt, !prompt.isEmpty { error.write(prompt) }
    if pollsStandardInput {
      while true {
        if Interruption.isRequested { throw .interrupted }
        if ContinuousClock.now - remindersCheckedAt >= Self.reminderInterval {
          await deliverDueReminders()
          if !prompt.isEmpty { error.write(prompt) }
        }
        var descriptor = pollfd(fd: 0, events: Int16(POLLIN), revents: 0)
        // Readable, hung up or failed: the read below reports which.
        if poll(&descriptor, 1, 0) != 0 { break }
        try? await Task.sleep(for: Self.tick)
      }
    }
    return try input.readLine()
  }

  /// Prints the running turn's prompt context once, as soon as the agent has built it (before
  /// any of the reply is written), with `--show-context`.
  private func printContextIfNew() {
    guard showContext, agent.contextsBuilt != contextPrinted, let turn = agent.lastContext else { return }
    contextPrinted = agent.contextsBuilt
    clearStatus()
    error.write(
      ChatRendering.context(turn, tokens: agent.lastContextTokens, budget: agent.configuration.contextBudget)
        .map { $0 + "\n" }.joined())
  }

  /// Writes the reply, or what is left of it after the part written while it streamed in.
  private func printReply(_ text: String) {
    printContextIfNew()
    output.write(partialReply.finish(text))
  }

  /// One line for an error `send` or `confirm` threw before any work started.
  nonisolated static func describe(_ error: AgentError) -> String {
    switch error {
    case .emptyInput: return "say something first"
    case .inputTooLong(let count, let limit):
      return "that is too long (\(count) characters; at most \(limit))"
    case .busy: return "still working on the previous request"
    case .nothingToConfirm: return "nothing is waiting for an answer"
    }
  }

  // MARK: - Status line

  private func drawStatus(_ label: String, frame: Int) {
    guard showsStatus else { return }
    let spinner = ChatRendering.spinnerFrames[frame % ChatRendering.spinnerFrames.count]
    error.write(
      "\r" + TextStyle.dim.apply(to: "\(spinner) \(label)", enabled: terminal.colorsError) + "\u{1B}[K")
    statusShown = true
  }

  private func clearStatus() {
    guard statusShown else { return }
    error.write("\r\u{1B}[K")
    statusShown = false
  }

  // MARK: - Slash commands

  /// Runs a `/command`; returns false for `/quit`.
  private func runSlashCommand(_ line: String) async -> Bool {
    let command: SlashCommand
    do {
      command = try SlashCommand.parse(line)
    } catch {
      self.error.write(error.message + "\n")
      return true
    }
    let width = terminal.isOutputTerminal ? terminal.width : 10_000
    let styled = terminal.colorsOutput
    let timeZone = agent.configuration.clock.timeZone
    let lines: [String]
    do {
      switch command {
      case .quit:
        return false
      case .help:
        lines = ChatRendering.help(interactive: isInteractive)
      case .history(let limit):
        let turns = try await agent.engine.conversation.recentTurns(limit: limit, session: agent.sessionID)
        lines = ChatRendering.history(turns, timeZone: timeZone)
      case .memories(let limit):
        lines = ChatRendering.memories(
          try await agent.engine.memories.list(limit: limit), timeZone: timeZone, width: width, styled: styled
        )
      case .skills:
        lines = ChatRendering.skills(agent.registry, width: width, styled: styled)
      }
    } catch {
      self.error.write(EngineAccess.describe(error) + "\n")
      return true
    }
    output.write(lines.map { $0 + "\n" }.joined())
    return true
  }
}
