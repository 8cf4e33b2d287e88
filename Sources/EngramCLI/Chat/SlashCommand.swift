/// A line of `engram chat` that starts with `/`: a command to the chat itself, not a request.
public enum SlashCommand: Sendable, Hashable {
  /// `/help`: the commands and a few example requests.
  case help
  /// `/history [N]`: the last N turns of the session (default 10).
  case history(limit: Int)
  /// `/memories [N]`: the N most recent memories (default 10).
  case memories(limit: Int)
  /// `/skills`: the skill catalog with each skill's enabled state.
  case skills
  /// `/quit` or `/exit`: ends the session.
  case quit

  /// How many rows `/history` and `/memories` show without a number.
  public static let defaultLimit = 10

  /// The command names, in the order `/help` lists them.
  public static let names = ["help", "history", "memories", "skills", "quit"]

  /// Why a slash line is not a command.
  public enum ParseError: Error, Sendable, Hashable {
    /// The name is not known; `suggestion` is the closest known name within two edits.
    case unknown(String, suggestion: String?)
    /// The command takes a positive count and got something else.
    case invalidCount(command: String, value: String)
    /// The command takes no argument.
    case unexpectedArgument(command: String, value: String)

    /// One line for standard error.
    public var message: String {
      switch self {
      case .unknown(let name, let suggestion):
        let hint = suggestion.map { " (did you mean /\($0)?)" } ?? ""
        return "unknown command /\(name)\(hint); type /help for the list"
      case .invalidCount(let command, let value):
        return "/\(command) takes a number of rows (1 or more), not '\(value)'"
      case .unexpectedArgument(let command, let value):
        return "/\(command) takes no argument (got '\(value)')"
      }
    }
  }

  /// Parses a line that starts with `/` (surrounding spaces are ignored).
  /// - Throws: ``ParseError`` for an unknown name, a bad count or an unexpected argument.
  public static func parse(_ line: String) throws(ParseError) -> SlashCommand {
    var words = line.split(whereSeparator: \.isWhitespace).map(String.init)
    let name = words.isEmpty ? "" : String(words.removeFirst().dropFirst()).lowercased()
    func noArgument(_ command: SlashCommand) throws(ParseError) -> SlashCommand {
      if let extra = words.first { throw .unexpectedArgument(command: name, value: extra) }
      return command
    }
    func count() throws(ParseError) -> Int {
      guard let text = words.first else { return defaultLimit }
      guard words.count == 1, let value = Int(text), value >= 1 else {
        throw .invalidCount(command: name, value: words.joined(separator: " "))
      }
      return value
    }
    switch name {
    case "help", "?": return try noArgument(.help)
    case "history": return .history(limit: try count())
    case "memories": return .memories(limit: try count())
    case "skills": return try noArgument(.skills)
    case "quit", "exit", "q": return try noArgument(.quit)
    default:
      let scored = names.map { ($0, CommandLineTool.editDistance($0, name)) }.filter { $0.1 <= 2 }
      throw .unknown(name, suggestion: scored.min { $0.1 < $1.1 }?.0)
    }
  }
}
