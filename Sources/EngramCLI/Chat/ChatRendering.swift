import Engram
import EngramAgent
import Foundation

/// How `engram chat` shows the agent's states, replies, history, memories and skills.
///
/// Pure functions of their inputs, so the wording is tested without a terminal.
public enum ChatRendering {
  /// The spinner frames drawn before the status line on a terminal.
  public static let spinnerFrames = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"]

  /// The status line for a running state (`planning…`, `executing step 2/3 reminder.create…`),
  /// nil for states that are not work in progress.
  public static func statusLabel(for state: AgentState) -> String? {
    switch state {
    case .retrieving: return "retrieving memories…"
    case .planning: return "planning…"
    case .executing(let skillID, let step, let total): return "executing step \(step)/\(total) \(skillID)…"
    case .idle, .waitingForConfirmation, .finished, .failed: return nil
    }
  }

  /// The reply to print for a state that ends a turn, nil otherwise.
  public static func replyText(for state: AgentState) -> String? {
    switch state {
    case .finished(let reply): return reply.text
    case .failed(let failure): return failure.message
    case .idle, .retrieving, .planning, .executing, .waitingForConfirmation: return nil
    }
  }

  /// The lines `--show-context` prints for a turn: a header with the token count (and who
  /// counted: the language model's server, or the estimate) and the budget, the prompt context
  /// as the model receives it, and a closing line.
  public static func context(_ turn: TurnContext, tokens: ContextTokenCount?, budget: Int) -> [String] {
    let count = tokens ?? ContextTokenCount(tokens: turn.tokenCount, source: .estimate)
    let counted = count.source == .server ? "counted by the model's server" : "estimated"
    let left = turn.omitted > 0 ? ", \(turn.omitted) left out" : ""
    var lines = ["--- prompt context: \(count.tokens) tokens (\(counted)), budget \(budget)\(left) ---"]
    let rendered = turn.rendered
    lines.append(contentsOf: rendered.isEmpty ? ["(empty)"] : rendered.components(separatedBy: "\n"))
    lines.append("--- end of prompt context ---")
    return lines
  }

  /// `text` on one line: line breaks (and the blanks around them) become one space.
  ///
  /// Scripts read one reply per line, so a multi-line reply (a recall with several memories)
  /// is folded when standard input is not a terminal.
  public static func folded(_ text: String) -> String {
    text.split(whereSeparator: \.isNewline)
      .map { $0.trimmingCharacters(in: .whitespaces) }
      .filter { !$0.isEmpty }
      .joined(separator: " ")
  }

  /// The `/help` page.
  public static func help(interactive: Bool) -> [String] {
    var lines = [
      "Talk to the agent in plain words; it answers from your memory and its skills, for example:",
      "  remember that my locker code is 4512",
      "  what is my locker code",
      "  remind me to call Sam tomorrow at 9",
      "  what is (12 + 30) * 2",
      "Anything that writes (a memory, a reminder, a note) is shown first; answer y to do it, n to cancel.",
      "",
      "Commands:",
      "  /help          this page",
      "  /history [N]   the last N turns of this conversation (default \(SlashCommand.defaultLimit))",
      "  /memories [N]  the N most recent memories (default \(SlashCommand.defaultLimit))",
      "  /skills        the skills and whether each is enabled (change with `engram skills`)",
      "  /quit          leave (also /exit)",
    ]
    if interactive {
      lines.append("Ctrl-C stops the agent while it works; Ctrl-C twice or Ctrl-D leaves.")
    } else {
      lines.append("End of input leaves.")
    }
    return lines
  }

  /// The `/history` lines: one per turn, oldest first, `time  who: text` with continuation
  /// lines indented under the text.
  public static func history(_ turns: [SearchHit], timeZone: TimeZone) -> [String] {
    guard !turns.isEmpty else { return ["(no turns yet)"] }
    return turns.flatMap { turn -> [String] in
      let who: String
      switch turn.speaker {
      case "user": who = "you"
      case "assistant": who = "engram"
      case let other?: who = other
      case nil: who = "?"
      }
      let head = "\(DateParser.display(turn.timestamp, timeZone: timeZone))  \(who): "
      let indent = String(repeating: " ", count: TextWidth.width(of: head))
      let lines = turn.text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
      return lines.enumerated().map { index, line in (index == 0 ? head : indent) + line }
    }
  }

  /// The `/memories` table: id, date, kind, text, newest first.
  public static func memories(_ items: [MemoryItem], timeZone: TimeZone, width: Int, styled: Bool)
    -> [String]
  {
    guard !items.isEmpty else { return ["(no memories yet)"] }
    var table = Table(columns: [.init("id", alignment: .right), .init("date"), .init("kind"), .init("text")])
    for item in items {
      table.append([
        item.id.map(String.init) ?? "-", DateParser.day(item.createdAt, timeZone: timeZone),
        item.kind.rawValue, item.content,
      ])
    }
    return table.render(width: width, styled: styled)
  }

  /// The `/skills` table: id, name, category, enabled, and whether it asks before acting.
  public static func skills(_ registry: SkillRegistry, width: Int, styled: Bool) -> [String] {
    var table = Table(columns: [.init("id"), .init("enabled"), .init("asks"), .init("name")])
    for skill in registry.allSkills {
      table.append([
        skill.id, registry.isEnabled(id: skill.id) ? "yes" : "no", skill.requiresConfirmation ? "yes" : "no",
        skill.displayName,
      ])
    }
    return table.render(width: width, styled: styled)
  }
}
