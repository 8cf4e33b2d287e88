import Engram
import EngramTestSupport
import Foundation
import Testing

@testable import EngramCLI

/// `engram chat` end to end: the built binary on temporary hashing memories, with piped stdin
/// (scripting) and on a pseudo-terminal (a person typing).
@Suite(.timeLimit(.minutes(5)), .watchdog) struct ChatCommandTests {
  /// Opens the memory the way the CLI does, to check what a chat stored.
  private func openEngine(_ path: String) throws -> MemoryEngine {
    let embedder = try EngineAccess.spec(forDatabaseAt: path).makeEmbedder(
      environment: ScratchFolder.environment)
    return try MemoryEngine(path: path, configuration: EngramConfiguration(embedder: embedder))
  }

  /// Today's date as the agent prints it (local time), read before and after a run so a run
  /// across midnight still matches.
  private func localDay(_ date: Date = Date()) -> String {
    let formatter = DateFormatter()
    formatter.locale = Locale(identifier: "en_US_POSIX")
    formatter.timeZone = .current
    formatter.dateFormat = "yyyy-MM-dd"
    return formatter.string(from: date)
  }

  private func lines(_ text: String) -> [String] {
    text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init).filter { !$0.isEmpty }
  }

  // MARK: - Piped stdin

  @Test func rememberIsConfirmedThenRecalledWithItsDate() async throws {
    let scratch = try ScratchFolder()
    let db = try await scratch.initializedDatabase()
    let before = localDay()
    let result = try await engram(
      "chat", "--db", db, input: "remember that my locker code is 4512\ny\nwhat is my locker code\n")
    let after = localDay()
    #expect(result.status == 0)
    #expect(result.standardError == "")
    let output = lines(result.standardOutput)
    try #require(output.count == 3)
    #expect(output[0] == "Remember: “my locker code is 4512”?")
    #expect(output[1] == "Got it, I'll remember that.")
    // One line per reply: the answer leads.
    #expect(output[2].hasPrefix("my locker code is 4512 ("))
    #expect(output[2].contains("(\(before))") || output[2].contains("(\(after))"))

    let engine = try openEngine(db)
    defer { engine.close() }
    #expect(try await engine.memories.list().map(\.content) == ["my locker code is 4512"])
    // The agent persisted both sides of the conversation in the chat session.
    let turns = try await engine.conversation.recentTurns(limit: 10)
    #expect(turns.map(\.speaker) == ["user", "assistant", "user", "assistant"])
    #expect(turns.first?.text == "remember that my locker code is 4512")
  }

  @Test func aReminderAnsweredNoStoresNothingAndYesStoresIt() async throws {
    let scratch = try ScratchFolder()
    let db = try await scratch.initializedDatabase()
    let declined = try await engram(
      "chat", "--db", db, input: "remind me to call the dentist tomorrow at 9\nn\n")
    #expect(declined.status == 0)
    let output = lines(declined.standardOutput)
    try #require(output.count == 2)
    #expect(output[0].hasPrefix("Create reminder “call the dentist” at "))
    #expect(output[0].contains(" 09:00 "))
    #expect(output[1] == "OK, I cancelled it. Nothing was changed.")
    do {
      let engine = try openEngine(db)
      defer { engine.close() }
      #expect(try await engine.agentRecords.items().isEmpty)
    }

    let confirmed = try await engram(
      "chat", "--db", db, input: "remind me to call the dentist tomorrow at 9\nyes\n")
    #expect(confirmed.status == 0)
    #expect(lines(confirmed.standardOutput).count == 2)
    let engine = try openEngine(db)
    defer { engine.close() }
    let items = try await engine.agentRecords.items()
    #expect(items.map(\.title) == ["call the dentist"])
    #expect(items.first?.kind == .reminder)
  }

  @Test func endOfInputWhileAskingDeclinesAndEndsCleanly() async throws {
    let scratch = try ScratchFolder()
    let db = try await scratch.initializedDatabase()
    let result = try await engram("chat", "--db", db, input: "remember that I like green tea")
    #expect(result.status == 0)
    #expect(
      lines(result.standardOutput) == [
        "Remember: “I like green tea”?", "OK, I cancelled it. Nothing was changed.",
      ])
    let engine = try openEngine(db)
    defer { engine.close() }
    #expect(try await engine.memories.list().isEmpty)
    // Declined now, so the next start has nothing unfinished to report.
    #expect(try await engine.agentRecords.cancelUnfinishedPendingCalls().isEmpty)
  }

  @Test func anAnswerOtherThanYesOrNoIsAskedAgain() async throws {
    let scratch = try ScratchFolder()
    let db = try await scratch.initializedDatabase()
    let result = try await engram("chat", "--db", db, input: "remember that my bike is blue\nmaybe\ny\n")
    #expect(result.status == 0)
    #expect(result.standardError == "Please answer y or n.\n")
    #expect(lines(result.standardOutput).last == "Got it, I'll remember that.")
    let engine = try openEngine(db)
    defer { engine.close() }
    #expect(try await engine.memories.list().map(\.content) == ["my bike is blue"])
  }

  @Test func slashCommandsShowHelpSkillsMemoriesAndHistory() async throws {
    let scratch = try ScratchFolder()
    let db = try await scratch.initializedDatabase()
    #expect(try await engram("skills", "disable", "calculator", "--db", db).status == 0)
    let result = try await engram(
      "chat", "--db", db,
      input: "remember that my locker code is 4512\ny\n/help\n/skills\n/memories\n/history 2\n")
    #expect(result.status == 0)
    #expect(result.standardError == "")
    let output = result.standardOutput
    for command in ["/help", "/history [N]", "/memories [N]", "/skills", "/quit"] {
      #expect(output.contains("  \(command) "), "help lists \(command)")
    }
    let skillRows = lines(output).filter { $0.hasPrefix("calculator ") || $0.hasPrefix("memory.remember ") }
    #expect(skillRows.count == 2)
    #expect(skillRows.contains { $0.hasPrefix("calculator ") && $0.contains(" no ") })
    #expect(skillRows.contains { $0.hasPrefix("memory.remember ") && $0.contains(" yes ") })
    #expect(lines(output).contains { $0.hasSuffix("  fact  my locker code is 4512") && $0.hasPrefix(" 1  ") })
    // /history 2: the last user turn ("y" is an answer, not a turn) and the reply.
    let historyLines = lines(output).suffix(2)
    #expect(historyLines.first?.hasSuffix("  you: remember that my locker code is 4512") == true)
    #expect(historyLines.last?.hasSuffix("  engram: Got it, I'll remember that.") == true)
  }

  @Test func quitEndsTheSessionAndLaterLinesAreNotRead() async throws {
    let scratch = try ScratchFolder()
    let db = try await scratch.initializedDatabase()
    let result = try await engram("chat", "--db", db, input: "/quit\nremember that I was never here\ny\n")
    #expect(result.status == 0)
    #expect(result.standardOutput == "")
    let engine = try openEngine(db)
    defer { engine.close() }
    #expect(try await engine.memories.list().isEmpty)
    #expect(try await engine.conversation.recentTurns(limit: 10).isEmpty)
  }

  @Test func unknownOrMalformedSlashCommandsSayWhatIsWrongAndGoOn() async throws {
    let scratch = try ScratchFolder()
    let db = try await scratch.initializedDatabase()
    let result = try await engram(
      "chat", "--db", db, input: "/skils\n/frobnicate\n/history zero\n/help me\nwhat is 6 * 7\n")
    #expect(result.status == 0)
    #expect(
      lines(result.standardError) == [
        "unknown command /skils (did you mean /skills?); type /help for the list",
        "unknown command /frobnicate; type /help for the list",
        "/history takes a number of rows (1 or more), not 'zero'",
        "/help takes no argument (got 'me')",
      ])
    #expect(lines(result.standardOutput) == ["6 * 7 = 42"])
  }

  @Test func aTooLongRequestIsRefusedAndTheSessionGoesOn() async throws {
    let scratch = try ScratchFolder()
    let db = try await scratch.initializedDatabase()
    let long = String(repeating: "a", count: 8001)
    let result = try await engram("chat", "--db", db, input: "\(long)\nwhat is 6 * 7\n")
    #expect(result.status == 0)
    #expect(result.standardError == "that is too long (8001 characters; at most 8000)\n")
    #expect(lines(result.standardOutput) == ["6 * 7 = 42"])
  }

  @Test func theStartupNoticeAboutCancelledActionsComesFirst() async throws {
    let scratch = try ScratchFolder()
    let db = try await scratch.initializedDatabase()
    do {
      let engine = try openEngine(db)
      defer { engine.close() }
      _ = try await engine.agentRecords.addPendingCall(
        executionID: UUID().uuidString, step: 1, skillID: "memory.remember",
        arguments: #"{"content":"half done"}"#, summary: "Remember: “half done”?")
    }
    let result = try await engram("chat", "--db", db, input: "/quit\n")
    #expect(result.status == 0)
    #expect(result.standardError == "1 unfinished action from last time was cancelled.\n")
    // Shown once: the call is cancelled now, so the next session starts quietly.
    #expect(try await engram("chat", "--db", db, input: "").standardError == "")
  }

  @Test func theLanguageModelOptionsAreCheckedBeforeAnythingOpens() async throws {
    let scratch = try ScratchFolder()
    let db = try await scratch.initializedDatabase()
    let insecure = try await engram(
      "chat", "--db", db, "--llm", "http://example.com:11434", "--llm-model", "m")
    #expect(insecure.status == 64)
    #expect(insecure.standardError.hasPrefix("engram: refusing plain http to example.com"))
    #expect(insecure.standardError.contains("--allow-insecure"))
    #expect(try await engram("chat", "--db", db, "--llm", "http://127.0.0.1:1").status == 64)
    #expect(try await engram("chat", "--db", db, "--llm-model", "m").status == 64)
    #expect(try await engram("chat", "--db", db, "--allow-insecure").status == 64)
    #expect(try await engram("chat", "--db", db, "--llm", "ftp://host", "--llm-model", "m").status == 64)
    // Accepted forms start the session (end of input ends it; nothing is sent to the server).
    let allowed = try await engram(
      "chat", "--db", db, "--llm", "http://example.com:11434", "--llm-model", "m", "--allow-insecure",
      input: "")
    #expect(allowed.status == 0)
    #expect(
      try await engram("chat", "--db", db, "--llm", "https://example.com", "--llm-model", "m", input: "")
        .status
        == 0)
  }

  @Test func aMissingMemorySuggestsInit() async throws {
    let scratch = try ScratchFolder()
    let path = scratch.path("absent.sqlite")
    let result = try await engram("chat", "--db", path, input: "hello\n")
    #expect(result.status == 1)
    #expect(
      result.standardError == "engram: no memory at \(path); create one with `engram init --db \(path)`\n")
  }

  // MARK: - A terminal

  @Test func aPersonConfirmsARequestOnATerminal() async throws {
    let scratch = try ScratchFolder()
    let db = try await scratch.initializedDatabase()
    let terminal = try PseudoTerminal(["chat", "--db", db])
    #expect(
      await terminal.waitFor("/help for commands, /quit or Ctrl-D to leave\n"), "banner: \(terminal.screen)")
    #expect(await terminal.waitFor("> "), "prompt: \(terminal.screen)")
    terminal.type("remember that my locker code is 4512")
    #expect(
      await terminal.waitFor("Remember: “my locker code is 4512”? [y/N] "), "confirmation: \(terminal.screen)"
    )
    terminal.type("y")
    #expect(await terminal.waitFor("Got it, I'll remember that.\n"), "reply: \(terminal.screen)")
    #expect(await terminal.waitFor("> "), "second prompt: \(terminal.screen)")
    terminal.type("what is my locker code")
    #expect(
      await terminal.waitFor("my locker code is 4512 ("),
      "recall: \(terminal.screen)")
    #expect(await terminal.waitFor("> "), "third prompt: \(terminal.screen)")
    terminal.type("/quit")
    #expect(await terminal.waitForExit() == 0, "exit: \(terminal.screen)")
    let engine = try openEngine(db)
    defer { engine.close() }
    #expect(try await engine.memories.list().map(\.content) == ["my locker code is 4512"])
  }

  @Test func ctrlCStopsTheTurnAndASecondCtrlCLeaves() async throws {
    let scratch = try ScratchFolder()
    let db = try await scratch.initializedDatabase()
    let server = try SilentListener()
    let terminal = try PseudoTerminal(["chat", "--db", db, "--llm", server.url, "--llm-model", "silent"])
    #expect(await terminal.waitFor("> "), "prompt: \(terminal.screen)")
    // No rule or sample phrase fits, so the request goes to the planner, which never answers.
    terminal.type("zebra quantum marmalade")
    #expect(await terminal.waitFor("planning…"), "status line: \(terminal.screen)")
    terminal.interrupt()
    #expect(await terminal.waitFor("Stopped.\n"), "stopped: \(terminal.screen)")
    #expect(await terminal.waitFor("> "), "prompt after stop: \(terminal.screen)")
    // The first Ctrl-C armed leaving: another one at the prompt ends the session (130).
    terminal.interrupt()
    #expect(await terminal.waitForExit() == 130, "exit: \(terminal.screen)")
    // The orderly way out (the signal handler's emergency exit prints nothing).
    #expect(terminal.screen.hasSuffix("engram: interrupted\n"), "\(terminal.screen)")
    let engine = try openEngine(db)
    defer { engine.close() }
    #expect(try await engine.conversation.recentTurns(limit: 10).first?.text == "zebra quantum marmalade")
  }

  @Test func ctrlCAtThePromptOnlyWarnsAndCtrlDLeaves() async throws {
    let scratch = try ScratchFolder()
    let db = try await scratch.initializedDatabase()
    let terminal = try PseudoTerminal(["chat", "--db", db])
    #expect(await terminal.waitFor("> "), "prompt: \(terminal.screen)")
    terminal.interrupt()
    #expect(await terminal.waitFor("(Ctrl-C again or Ctrl-D to leave)\n> "), "warning: \(terminal.screen)")
    // A line disarms it: the next Ctrl-C warns again instead of leaving.
    terminal.type("what is 6 * 7")
    #expect(await terminal.waitFor("6 * 7 = 42\n> "), "reply: \(terminal.screen)")
    terminal.interrupt()
    #expect(
      await terminal.waitFor("(Ctrl-C again or Ctrl-D to leave)\n> "), "second warning: \(terminal.screen)")
    terminal.endOfInput()
    #expect(await terminal.waitForExit() == 0, "exit: \(terminal.screen)")
  }
}
