import Engram
import Foundation

/// `engram doctor`: checks that store, full-text indexes and vector index agree.
public enum DoctorCommand: Command {
  /// The command's declaration.
  public static let configuration = CommandConfiguration(
    commandName: "doctor", abstract: "Check the memory's consistency (and repair it with --repair).",
    options: [.database, .flag("repair", help: "Rebuild what can be rebuilt."), .json])

  /// Prints one line per check; exits 1 when unhealthy (after repair, when asked).
  public static func run(_ context: CommandContext) async throws {
    let repair = context.arguments.flag("repair")
    let report = try await EngineAccess.withEngine(context, mode: repair ? .readWrite : .readOnly) { engine in
      try await engine.doctor(repair: repair)
    }
    if context.arguments.flag("json") {
      for check in report.checks {
        try context.jsonLines.write(
          ["check": .string(check.name), "ok": .bool(check.ok), "detail": .string(check.detail)] as JSONValue)
      }
      for repair in report.repairs { try context.jsonLines.write(["repair": .string(repair)] as JSONValue) }
    } else {
      let colors = context.terminal.colorsOutput
      for check in report.checks {
        let mark =
          check.ok
          ? TextStyle.green.apply(to: "ok  ", enabled: colors)
          : TextStyle.red.apply(to: "FAIL", enabled: colors)
        context.output.write("\(mark)  \(check.name): \(check.detail)\n")
      }
      for repair in report.repairs { context.output.write("repaired  \(repair)\n") }
    }
    if !report.healthy {
      context.error.write(
        "\(context.toolName): the memory is not healthy\(context.arguments.flag("repair") ? "" : "; try --repair")\n"
      )
      throw ExitCode.failure
    }
  }
}
