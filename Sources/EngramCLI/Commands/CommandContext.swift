import Engram
import Foundation

/// Everything a running command may use besides its options: the memory it names, the
/// streams and the environment.
///
/// Commands write through the context rather than `print`, so tests can capture the output.
public struct CommandContext: Sendable {
  /// The tool's name (`engram`), for messages.
  public var toolName: String
  /// `--db` as given (before `$ENGRAM_DB` and the default apply), for commands that take it.
  public var database: String?
  /// `--user` as given (before `$ENGRAM_USER` applies), for commands that take it.
  public var userOption: String?
  /// Standard output (results, JSON lines).
  public var output: any TextOutput
  /// Standard error (progress, messages).
  public var error: any TextOutput
  /// Standard input, line by line.
  public var input: LineReader
  /// What the streams are connected to.
  public var terminal: Terminal
  /// The process environment.
  public var environment: [String: String]

  /// Creates a context.
  public init(
    toolName: String, database: String? = nil, userOption: String? = nil, output: any TextOutput,
    error: any TextOutput, input: LineReader, terminal: Terminal, environment: [String: String]
  ) {
    self.toolName = toolName
    self.database = database
    self.userOption = userOption
    self.output = output
    self.error = error
    self.input = input
    self.terminal = terminal
    self.environment = environment
  }

  /// The database path: `--db`, else `$ENGRAM_DB`, else the per-user default.
  public var databasePath: String {
    DatabaseLocation.resolve(option: database, environment: environment)
  }

  /// The user whose memory the command uses: `--user`, else `$ENGRAM_USER`, else the default
  /// user (see docs/users.md).
  /// - Throws: `UsageError` for an id that is not 1...128 ASCII letters, digits, `.`, `_`,
  ///   `-` or `@`.
  public func user() throws -> String {
    let given = userOption ?? environment["ENGRAM_USER"].flatMap { $0.isEmpty ? nil : $0 }
    guard let given else { return StoreUser.defaultID }
    guard let user = try? StoreUser.validated(given) else {
      throw UsageError(
        "invalid user '\(given)': use 1-128 ASCII letters, digits, '.', '_', '-' or '@' (not starting with '.' or '-')"
      )
    }
    return user
  }

  /// A JSON-lines writer on standard output.
  public var jsonLines: JSONLinesWriter { JSONLinesWriter(output: output) }

  /// Asks a yes/no question on the terminal (or reads `y`/`n` from piped stdin); `false` on EOF.
  public func confirm(_ prompt: String) -> Bool {
    input.confirm(prompt, promptOutput: error)
  }
}
