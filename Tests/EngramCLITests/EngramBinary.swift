import Foundation

/// Finds and runs the built `engram` executable for end-to-end tests.
enum EngramBinary {
  /// What a run produced.
  struct Result {
    var status: Int32
    var standardOutput: String
    var standardError: String
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

  /// The binary: `$ENGRAM_BINARY`, else next to the test bundle (the build's bin folder),
  /// else in the folder `swift build --show-bin-path` reports for this package.
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
    if let folder = try? showBinPath() {
      let candidate = folder.appendingPathComponent("engram")
      if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
      folders.append(folder)
    }
    throw LocateError.notFound(searched: folders.map(\.path))
  }

  /// `swift build --show-bin-path` run in the package root (found from this file's path).
  private static func showBinPath() throws -> URL {
    let packageRoot = URL(fileURLWithPath: #filePath)
      .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    let result = try run(
      URL(fileURLWithPath: "/usr/bin/env"), arguments: ["swift", "build", "--show-bin-path"], input: nil,
      environment: nil, directory: packageRoot)
    return URL(fileURLWithPath: result.standardOutput.trimmingCharacters(in: .whitespacesAndNewlines))
  }

  /// Runs `engram` with `arguments`, feeding `input` on stdin and adding `environment` to this
  /// process's environment.
  static func run(_ arguments: [String], input: String? = nil, environment: [String: String] = [:]) throws
    -> Result
  {
    var merged = ProcessInfo.processInfo.environment
    merged.merge(environment) { _, new in new }
    return try run(try locate(), arguments: arguments, input: input, environment: merged, directory: nil)
  }

  /// Runs `command[0]` (an executable path, such as a wrapper) with the other elements as
  /// arguments, adding `environment` to this process's environment.
  static func runExecutable(_ command: [String], environment: [String: String] = [:]) throws -> Result {
    var merged = ProcessInfo.processInfo.environment
    merged.merge(environment) { _, new in new }
    return try run(
      URL(fileURLWithPath: command[0]), arguments: Array(command.dropFirst()), input: nil,
      environment: merged,
      directory: nil)
  }

  /// Output goes through temporary files, so a chatty child can never block on a full pipe.
  static func run(
    _ executable: URL, arguments: [String], input: String?, environment: [String: String]?, directory: URL?
  ) throws -> Result {
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent(
      "engram-e2e-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: folder) }
    let inputURL = folder.appendingPathComponent("stdin")
    let outputURL = folder.appendingPathComponent("stdout")
    let errorURL = folder.appendingPathComponent("stderr")
    try Data((input ?? "").utf8).write(to: inputURL)
    try Data().write(to: outputURL)
    try Data().write(to: errorURL)
    let inputHandle = try FileHandle(forReadingFrom: inputURL)
    let outputHandle = try FileHandle(forWritingTo: outputURL)
    let errorHandle = try FileHandle(forWritingTo: errorURL)
    defer {
      try? inputHandle.close()
      try? outputHandle.close()
      try? errorHandle.close()
    }
    let process = Process()
    process.executableURL = executable
    process.arguments = arguments
    if let environment { process.environment = environment }
    if let directory { process.currentDirectoryURL = directory }
    process.standardInput = inputHandle
    process.standardOutput = outputHandle
    process.standardError = errorHandle
    try process.run()
    process.waitUntilExit()
    return Result(
      status: process.terminationStatus,
      standardOutput: String(decoding: try Data(contentsOf: outputURL), as: UTF8.self),
      standardError: String(decoding: try Data(contentsOf: errorURL), as: UTF8.self))
  }
}
