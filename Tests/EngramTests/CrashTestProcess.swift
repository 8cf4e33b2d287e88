import EngramTestSupport
import Foundation

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// A running child of the crash tests (`engram-crashtest`, or the `engram` CLI itself): its
/// stdout goes to a file, so every acknowledgement line written before a SIGKILL can still be
/// read afterwards.
final class CrashTestProcess {
  enum LocateError: Error, CustomStringConvertible {
    case notFound(name: String, searched: [String])
    case notReady(output: String)

    var description: String {
      switch self {
      case .notFound(let name, let searched):
        return "\(name) not found (run `swift build` first); looked in \(searched.joined(separator: ", "))"
      case .notReady(let output): return "engram-crashtest never printed READY: \(output)"
      }
    }
  }

  let child: ChildProcess
  let outputURL: URL
  let errorURL: URL

  /// Starts `engram-crashtest DB MODE ARGUMENTS...`.
  convenience init(database: String, mode: String, arguments: [String] = []) throws {
    try self.init(
      executable: "engram-crashtest", arguments: [database, mode] + arguments,
      folder: URL(fileURLWithPath: database).deletingLastPathComponent())
  }

  /// Starts the built executable `executable` with `arguments`; its output files go in `folder`.
  init(executable: String, arguments: [String], folder: URL) throws {
    let stem = "crashtest-\(UUID().uuidString.prefix(8))"
    outputURL = folder.appendingPathComponent(stem + ".out")
    errorURL = folder.appendingPathComponent(stem + ".err")
    child = try ChildProcess(
      try Self.locate(executable).path, arguments: arguments,
      standardOutput: .file(outputURL.path), standardError: .file(errorURL.path))
  }

  deinit {
    // ChildProcess kills a child nobody waited for; its reaper thread collects it.
    try? FileManager.default.removeItem(at: outputURL)
    try? FileManager.default.removeItem(at: errorURL)
  }

  /// Everything in `url` so far. Read through a FileHandle: on Linux, `Data(contentsOf:)` of
  /// an empty file leaks its 4 KiB read buffer (swift-foundation's zero-size path; found by
  /// `make sanitize`), and these files are polled while still empty.
  static func contents(of url: URL) -> Data {
    guard let handle = try? FileHandle(forReadingFrom: url) else { return Data() }
    defer { try? handle.close() }
    return (try? handle.readToEnd()) ?? Data()
  }

  /// Complete lines printed so far (a line cut by the kill is dropped).
  var lines: [String] {
    let text = String(decoding: Self.contents(of: outputURL), as: UTF8.self)
    var lines = text.split(separator: "\n", omittingEmptySubsequences: true).map(String.init)
    if !text.hasSuffix("\n"), !lines.isEmpty { lines.removeLast() }
    return lines
  }

  var standardError: String {
    String(decoding: Self.contents(of: errorURL), as: UTF8.self)
  }

  /// Waits (up to 30 s) until the child printed READY.
  func waitUntilReady() async throws {
    for _ in 0..<3000 {
      if lines.contains("READY") { return }
      if !child.isRunning { break }
      try await Task.sleep(for: .milliseconds(10))
    }
    throw LocateError.notReady(output: lines.joined(separator: " | ") + standardError)
  }

  /// Waits (up to 120 s) until the child acknowledged its first write.
  func waitUntilAcknowledged() async throws {
    for _ in 0..<12000 {
      if lines.contains(where: { $0.hasPrefix("ACK") }) { return }
      if !child.isRunning { break }
      try await Task.sleep(for: .milliseconds(10))
    }
    throw LocateError.notReady(output: lines.joined(separator: " | ") + standardError)
  }

  /// Sends SIGKILL `milliseconds` from now (timed off the cooperative pool) and awaits the
  /// child's reaping; returns whether the kill ended it.
  @discardableResult
  func kill(afterMilliseconds milliseconds: Int) async -> Bool {
    await child.kill(after: .milliseconds(milliseconds))
  }

  /// Awaits the child's exit; returns its status (128 + the signal when one ended it).
  func wait() async -> Int32 {
    await child.exit().status
  }

  /// How long the child ran (nil while it runs); see ``ChildProcess/lifetime``.
  var lifetime: Duration? { child.lifetime }

  /// The exit status once the child has ended (nil while it runs).
  var terminationStatus: Int32? { child.termination?.status }

  /// The executable `name`: `$ENGRAM_CRASHTEST` / `$ENGRAM_BINARY` when set, else next to
  /// the test bundle (the build's bin folder, where `swift build --build-tests` puts it).
  static func locate(_ name: String) throws -> URL {
    let variable = name == "engram" ? "ENGRAM_BINARY" : "ENGRAM_CRASHTEST"
    if let explicit = ProcessInfo.processInfo.environment[variable] {
      return URL(fileURLWithPath: explicit)
    }
    var folders: [URL] = []
    if let executable = Bundle.main.executableURL {
      // Linux: the test runner is `<bin>/EngramPackageTests.xctest`, an executable in the bin folder.
      let candidate = executable.deletingLastPathComponent().appendingPathComponent(name)
      if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
      folders.append(executable.deletingLastPathComponent())
    }
    // Bundle.allBundles only when needed (macOS): on Linux each call leaks CFBundle's array.
    for bundle in Bundle.allBundles where bundle.bundlePath.hasSuffix(".xctest") {
      let candidate = bundle.bundleURL.deletingLastPathComponent().appendingPathComponent(name)
      if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
      folders.append(bundle.bundleURL.deletingLastPathComponent())
    }
    throw LocateError.notFound(name: name, searched: folders.map(\.path))
  }
}

/// Whether the long soak runs (`ENGRAM_SOAK=1`).
var soakEnabled: Bool { ProcessInfo.processInfo.environment["ENGRAM_SOAK"] == "1" }
