import Engram
import Foundation

/// `engram users add ID | list | remove ID`: the users a multi-user server knows by token.
public enum UsersCommand: Command {
  /// The command's declaration.
  public static let configuration = CommandConfiguration(
    commandName: "users", abstract: "Add, list or remove the users a server selects by bearer token.",
    discussion: """
      `add ID` draws a new random token (256 bits), prints it once on standard output and
      stores only its SHA-256 in the users file; `list` prints the user ids; `remove ID`
      takes the user out (their token stops working at the server's next start; their
      memory is kept). Serve the users with `engram mcp --http HOST:PORT --users FILE`:
      each request's `Authorization: Bearer TOKEN` selects its user (docs/users.md).
      """,
    usage: "add ID | list | remove ID [--users FILE]")

  /// What to do.
  enum Action: String, CaseIterable, ExpressibleByArgument {
    case add, list, remove
  }

  /// The command's options.
  public struct Options: ParsableOptions {
    @Option(
      valueName: "FILE",
      help: "The users file (default: $ENGRAM_USERS, else 'users' in the per-user data folder).")
    var users: String?
    @Argument(help: "add, list or remove.") var action: Action
    @Argument(help: "The user id (add, remove).") var id: String?

    /// The defaults.
    public init() {}
  }

  /// The users file the options name: `--users`, else `$ENGRAM_USERS`, else `users` beside
  /// the default memory.
  static func path(_ option: String?, environment: [String: String]) -> String {
    if let option, !option.isEmpty { return option }
    if let fromEnvironment = environment["ENGRAM_USERS"], !fromEnvironment.isEmpty { return fromEnvironment }
    let memory = DatabaseLocation.resolve(
      option: nil, environment: environment.filter { $0.key != "ENGRAM_DB" })
    return (memory as NSString).deletingLastPathComponent + "/users"
  }

  /// Runs the action.
  public static func run(_ options: Options, context: CommandContext) async throws {
    let path = path(options.users, environment: context.environment)
    do {
      switch options.action {
      case .list:
        guard options.id == nil else { throw UsageError("users list takes no id") }
        for user in try UsersFile.load(path: path, missingIsEmpty: true).users {
          context.output.write(user + "\n")
        }
      case .add:
        guard let id = options.id else { throw UsageError(.missingArgument("ID")) }
        var file = try UsersFile.load(path: path, missingIsEmpty: true)
        let token: String
        do {
          token = try file.add(id)
        } catch .invalidUser(let user) {
          throw UsageError(.invalidValue(argument: "ID", value: user, expected: "a user id (docs/users.md)"))
        }
        let folder = (path as NSString).deletingLastPathComponent
        if !folder.isEmpty {
          try? FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        }
        try file.save(path: path)
        context.output.write(token + "\n")
        context.error.write("added user \(id) to \(path); the token above is shown only once\n")
      case .remove:
        guard let id = options.id else { throw UsageError(.missingArgument("ID")) }
        var file = try UsersFile.load(path: path)
        guard file.remove(id) else { throw CommandFailure("\(path): no user '\(id)'") }
        try file.save(path: path)
        context.error.write("removed user \(id) from \(path) (their memory is kept)\n")
      }
    } catch let error as UsersFileError {
      throw CommandFailure(error.description)
    }
  }
}
