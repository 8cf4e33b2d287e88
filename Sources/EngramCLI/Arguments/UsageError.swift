/// A command line that cannot be run as written; the tool prints it with the usage line and exits 64.
public struct UsageError: Error, Sendable, Hashable, CustomStringConvertible {
  /// What is wrong.
  public enum Reason: Sendable, Hashable {
    /// No command was given.
    case missingCommand
    /// The command name is not known; `suggestion` is the closest known name, if close.
    case unknownCommand(String, suggestion: String?)
    /// An option the command does not declare (`--frobnicate`, `-z`).
    case unknownOption(String)
    /// An option that needs a value came last or was followed by another option.
    case missingValue(option: String)
    /// A flag was given a value (`--json=yes`).
    case unexpectedValue(option: String)
    /// A value that does not convert to the declared kind.
    case invalidValue(argument: String, value: String, expected: String)
    /// A required positional argument is missing.
    case missingArgument(String)
    /// More positional arguments than the command takes.
    case unexpectedArgument(String)
    /// A check the command makes itself (two options that exclude each other, `-k 0`).
    case invalid(String)
  }

  /// What is wrong.
  public var reason: Reason
  /// The command's usage line (`engram query TEXT [-k N]`); filled in by the tool when empty.
  public var usage: String

  /// Creates a usage error.
  public init(_ reason: Reason, usage: String = "") {
    self.reason = reason
    self.usage = usage
  }

  /// Creates a usage error from a command's own validation message.
  public init(_ message: String) {
    self.init(.invalid(message))
  }

  /// The problem in one sentence, without the usage line.
  public var message: String {
    switch reason {
    case .missingCommand:
      return "missing command"
    case .unknownCommand(let name, let suggestion):
      if let suggestion { return "unknown command '\(name)' (did you mean '\(suggestion)'?)" }
      return "unknown command '\(name)'"
    case .unknownOption(let option):
      return "unknown option '\(option)'"
    case .missingValue(let option):
      return "missing value for option '\(option)'"
    case .unexpectedValue(let option):
      return "option '\(option)' takes no value"
    case .invalidValue(let argument, let value, let expected):
      return "invalid value '\(value)' for '\(argument)': expected \(expected)"
    case .missingArgument(let name):
      return "missing argument \(name)"
    case .unexpectedArgument(let value):
      return "unexpected argument '\(value)'"
    case .invalid(let message):
      return message
    }
  }

  /// The problem and the usage line, as printed on stderr.
  public var description: String {
    usage.isEmpty ? message : "\(message)\nUsage: \(usage)"
  }
}

/// Ends a command with a given exit status and no message (the command printed what it had to say).
public struct ExitCode: Error, Sendable, Hashable {
  /// The process exit status.
  public var rawValue: Int32

  /// Creates an exit code.
  public init(_ rawValue: Int32) {
    self.rawValue = rawValue
  }

  /// Success.
  public static let success = ExitCode(0)
  /// A general failure.
  public static let failure = ExitCode(1)
  /// A usage error (EX_USAGE from sysexits.h).
  public static let usage = ExitCode(64)
  /// Stopped by Ctrl-C (128 + SIGINT).
  public static let interrupted = ExitCode(130)
}
