import EngramTestSupport
import Foundation

/// Finds and runs the built `engram` executable for end-to-end tests.
enum EngramBinary {
  /// What a run produced.
  struct Result {
    var status: Int32
    var standardOutput: String
    var standardError: String
    /// How long the child ran, start-up included (not the time until the test ran again).
    var lifetime: Duration = .zero
  }

  enum LocateError: Error, CustomStringConvertible {
    case notFound(searched: [String])
    var description: String {
      switch self {
      case .notFound(let searched):
        return
          "engram binary not found (run `swift build` first); looked in \(searched.joined(separator: ", "))"
      }
    }
  }

  /// The binary: `$ENGRAM_BINARY`, else next to the test bundle (the build's bin folder,
  /// where `swift build --build-tests` puts it).
  static func locate() throws -> URL {
    let environment = ProcessInfo.processInfo.environment
    if let explicit = environment["ENGRAM_BINARY"] { return URL(fileURLWithPath: explicit) }
    var folders: [URL] = []
    for bundle in Bundle.allBundles where bundle.bundlePath.hasSuffix(".xctest") {
      folders.append(bundle.bundleURL.deletingLastPathComponent())
    }
    if let executable = Bundle.main.executableURL {
      // Linux: the test runner is `<bin>/EngramPackageTests.xctest`, an executable in the bin folder.
      folders.append(executable.deletingLastPathComponent())
    }
    for folder in folders {
      let candidate = folder.appendingPathComponent("engram")
      if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
    }
    throw LocateError.notFound(searched: folders.map(\.path))
  }

  /// Runs `engram` with `arguments`, feeding `input` on stdin and adding `environment` to this
  /// process's environment.
  static func run(_ arguments: [String], input: String? = nil, environment: [String: String] = [:])
    async throws -> Result
  {
    var merged = ProcessInfo.processInfo.environment
    merged.merge(environment) { _, new in new }
    return try await run(
      try locate(), arguments: arguments, input: input, environment: merged, directory: nil)
  }

  /// Runs `command[0]` (an executable path, such as a wrapper) with the other elements as
  /// arguments, adding `environment` to this process's environment.
  static func runExecutable(_ command: [String], environment: [String: String] = [:]) async throws -> Result {
    var merged = ProcessInfo.processInfo.environment
    merged.merge(environment) { _, new in new }
    return try await run(
      URL(fileURLWithPath: command[0]), arguments: Array(command.dropFirst()), input: nil,
      environment: merged,
      directory: nil)
  }

  /// Output goes through temporary files, so a chatty child can never block on a full pipe;
  /// the exit is awaited (``ChildProcess``), never waited for on a cooperative thread.
  static func run(
    _ executable: URL, arguments: [String], input: String?, environment: [String: String]?, directory: URL?
  ) async throws -> Result {
    let output = try await ChildProcess.run(
      executable.path, arguments: arguments, input: input, environment: environment,
      directory: directory?.path)
    return Result(
      status: output.status, standardOutput: output.standardOutput, standardError: output.standardError,
      lifetime: output.lifetime)
  }
}
