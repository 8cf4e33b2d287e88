/// Generates usage lines and help pages from command configurations.
public enum HelpFormatter {
  /// `engram query [--db PATH] [-k N] [--json] TEXT`: the one-line usage of a command.
  public static func usageLine(for configuration: CommandConfiguration, toolName: String) -> String {
    let prefix = toolName + " " + configuration.commandName
    if var usage = configuration.usage {
      // A usage written with the command's name in front names it once.
      let name = configuration.commandName
      if usage == name {
        usage = ""
      } else if usage.hasPrefix(name + " ") {
        usage.removeFirst(name.count + 1)
      }
      return usage.isEmpty ? prefix : prefix + " " + usage
    }
    var parts = [prefix]
    for option in configuration.options {
      var text =
        option.shortName.map { "-\($0)" + (option.isFlag ? "" : " " + option.valueName) }
        ?? option.synopsis
      if option.isRepeating { text += " ..." }
      parts.append("[\(text)]")
    }
    parts += configuration.positionals.map(\.synopsis)
    return parts.joined(separator: " ")
  }

  /// The full help page of a command: abstract, usage, discussion, arguments and options.
  public static func help(for configuration: CommandConfiguration, toolName: String) -> String {
    var lines: [String] = []
    if !configuration.abstract.isEmpty { lines += ["OVERVIEW: " + configuration.abstract, ""] }
    lines.append("USAGE: " + usageLine(for: configuration, toolName: toolName))
    if !configuration.discussion.isEmpty { lines += ["", configuration.discussion] }
    if !configuration.positionals.isEmpty {
      lines += ["", "ARGUMENTS:"]
      lines += twoColumns(configuration.positionals.map { ($0.synopsis, $0.help) })
    }
    var optionRows: [(String, String)] = configuration.options.map { option in
      let names = (option.shortName.map { "-\($0), " } ?? "") + option.synopsis
      var help = option.help
      if option.isRepeating { help += " (may be repeated)" }
      if let defaultDescription = option.defaultDescription { help += " (default: \(defaultDescription))" }
      return (names, help)
    }
    optionRows.append(("-h, --help", "Show help for this command."))
    lines += ["", "OPTIONS:"]
    lines += twoColumns(optionRows)
    return lines.joined(separator: "\n") + "\n"
  }

  /// The tool's help page: overview, usage and the list of commands.
  public static func toolHelp(
    toolName: String, abstract: String, commands: [CommandConfiguration]
  ) -> String {
    var lines: [String] = []
    if !abstract.isEmpty { lines += ["OVERVIEW: " + abstract, ""] }
    lines.append("USAGE: \(toolName) <command> [options]")
    lines += ["", "COMMANDS:"]
    var rows = commands.map { ($0.commandName, $0.abstract) }
    rows.append(("help", "Show help for a command."))
    lines += twoColumns(rows)
    lines += ["", "OPTIONS:"]
    lines += twoColumns([("-h, --help", "Show this help."), ("--version", "Show the version.")])
    lines += ["", "See '\(toolName) help <command>' for a command's options."]
    return lines.joined(separator: "\n") + "\n"
  }

  /// Aligns `(term, help)` rows: terms indented 2, help starting at a common column.
  static func twoColumns(_ rows: [(String, String)]) -> [String] {
    // Terms longer than the cap get their help on the next line and do not widen the column.
    let cap = 28
    let termWidth = rows.map { $0.0.count }.filter { $0 <= cap }.max() ?? cap
    return rows.map { term, help in
      let indent = "  " + term
      if help.isEmpty { return indent }
      if term.count > termWidth {
        return indent + "\n" + String(repeating: " ", count: termWidth + 4) + help
      }
      return indent + String(repeating: " ", count: termWidth - term.count + 2) + help
    }
  }
}
