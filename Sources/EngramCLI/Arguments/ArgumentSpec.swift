import Foundation

/// The type of value an option or positional argument takes; the parser converts and checks it.
public enum ValueKind: Sendable, Hashable {
  /// Any text.
  case string
  /// A base-10 integer (`-k 5`).
  case integer
  /// A finite decimal number.
  case double
  /// A duration such as `30d` or `1h30m` (see ``DurationParser``), stored as seconds.
  case duration
  /// A date `YYYY-MM-DD` or an ISO 8601 timestamp (see ``DateParser``).
  case date
  /// One of a fixed list of words (`--mode hybrid|vector|keyword`).
  case choice([String])

  /// How help and errors describe a value of this kind.
  var expectation: String {
    switch self {
    case .string: return "text"
    case .integer: return "an integer"
    case .double: return "a number"
    case .duration: return "a duration such as 30d, 12h, 1h30m (units s, m, h, d, w)"
    case .date: return "a date YYYY-MM-DD or an ISO 8601 timestamp"
    case .choice(let words): return "one of " + words.joined(separator: ", ")
    }
  }
}

/// A named option or flag a command accepts, declared as data so help can be generated.
public struct OptionSpec: Sendable, Hashable {
  /// The long name without dashes (`db` for `--db`); also the key to read the value back.
  public var name: String
  /// An optional one-letter short name (`k` for `-k`).
  public var shortName: Character?
  /// The value type, or `nil` for a flag that takes no value.
  public var kind: ValueKind?
  /// Whether the option may be given several times (`--tag a --tag b`); values are collected.
  public var isRepeating: Bool
  /// The placeholder shown in help (`PATH`, `N`).
  public var valueName: String
  /// One line of help.
  public var help: String
  /// The default shown in help, if any (the command applies it).
  public var defaultDescription: String?

  /// Creates an option taking a value of `kind`.
  public init(
    _ name: String, short: Character? = nil, kind: ValueKind = .string, valueName: String? = nil,
    repeating: Bool = false, help: String, defaultDescription: String? = nil
  ) {
    self.name = name
    self.shortName = short
    self.kind = kind
    self.isRepeating = repeating
    if let valueName {
      self.valueName = valueName
    } else if case .choice(let words) = kind {
      self.valueName = words.joined(separator: "|")
    } else {
      self.valueName = name.uppercased().replacingOccurrences(of: "-", with: "_")
    }
    self.help = help
    self.defaultDescription = defaultDescription
  }

  /// Creates a flag: present or absent, no value.
  public static func flag(_ name: String, short: Character? = nil, help: String) -> OptionSpec {
    var spec = OptionSpec(name, short: short, help: help)
    spec.kind = nil
    spec.valueName = ""
    return spec
  }

  /// Whether this option is a flag (takes no value).
  public var isFlag: Bool { kind == nil }

  /// `--db PATH`, `-k, --limit N`, `--json`: the form shown in usage and help.
  var synopsis: String {
    var text = "--" + name
    if !isFlag { text += " " + valueName }
    return text
  }
}

/// A positional argument a command accepts, in declaration order.
public struct PositionalSpec: Sendable, Hashable {
  /// The key to read the value back and the placeholder shown in help (upper-cased).
  public var name: String
  /// The value type.
  public var kind: ValueKind
  /// Whether the argument may be left out.
  public var isOptional: Bool
  /// Whether the argument collects all remaining positionals (only the last one may).
  public var isRepeating: Bool
  /// One line of help.
  public var help: String

  /// Creates a positional argument.
  public init(
    _ name: String, kind: ValueKind = .string, optional: Bool = false, repeating: Bool = false,
    help: String
  ) {
    self.name = name
    self.kind = kind
    self.isOptional = optional
    self.isRepeating = repeating
    self.help = help
  }

  /// `TEXT`, `[TEXT]`, `FILE...`: the form shown in usage.
  var synopsis: String {
    var text = name.uppercased()
    if isRepeating { text += "..." }
    return isOptional ? "[\(text)]" : text
  }
}

extension OptionSpec {
  /// `--db PATH`, as ``DatabaseOptions`` declares it.
  public static var database: OptionSpec { DatabaseOptions.optionSpecs[0] }

  /// `--user ID`, as ``UserOptions`` declares it.
  public static var user: OptionSpec { UserOptions.optionSpecs[0] }

  /// `--json`: print JSON lines on stdout.
  public static let json = OptionSpec.flag("json", help: ArgumentHelp.json)
}
