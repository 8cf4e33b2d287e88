import Engram
import Foundation

/// `engram doctor`: checks that store, full-text indexes and vector index agree.
public enum DoctorCommand: Command {
  /// The command's declaration.
  public static let configuration = CommandConfiguration(
    commandName: "doctor", abstract: "Check the memory's consistency (and repair it with --repair).",
    discussion: """
      --repair rebuilds the full-text indexes, removes orphan embeddings, embeds what lacks an
      embedding and rebuilds the vector index with its snapshot. A file SQLite cannot read
      (truncated or damaged pages) cannot be repaired in place: doctor says so and how to
      recover (move it aside, then import an export or a backup into a new memory).
      """)

  /// The command's options.
  public struct Options: ParsableOptions {
    @OptionGroup var database: DatabaseOptions
    @Flag(help: "Rebuild what can be rebuilt.") var repair = false
    @Flag(help: ArgumentHelp.json) var json = false

    /// The defaults.
    public init() {}
  }

  /// Prints one line per check; exits 1 when unhealthy (after repair, when asked).
  public static func run(_ options: Options, context: CommandContext) async throws {
    let repair = options.repair
    let engine: MemoryEngine
    do {
      engine = try await EngineAccess.openOffPool(context, mode: repair ? .readWrite : .readOnly)
    } catch let error as SQLiteError where error.code == .corrupt || error.code == .notADatabase {
      // SQLite cannot read the file: nothing here can repair it, so say what can (never
      // "run doctor --repair" again).
      let line = EngineAccess.describe(error)
      if options.json {
        try context.jsonLines.write(
          ["check": "integrity", "ok": false, "detail": .string(line)] as JSONValue)
      } else {
        context.output.write("FAIL  integrity: \(line)\n")
      }
      context.error.write(
        "\(context.toolName): the memory cannot be opened"
          + "\(repair ? "; --repair cannot fix a file SQLite cannot read" : "")\n")
      throw ExitCode.failure
    } catch {
      throw CommandFailure(EngineAccess.describe(error))
    }
    let report = try await EngineAccess.mappingErrors {
      try await EngineAccess.closing(engine) { engine in try await engine.doctor(repair: repair) }
    }
    if options.json {
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
        "\(context.toolName): the memory is not healthy\(options.repair ? "" : "; try --repair")\n"
      )
      throw ExitCode.failure
    }
  }
}
