import Foundation
import Synchronization

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// A child process for tests, started with `posix_spawn` and reaped by a thread of its own
/// that sits in `waitpid`: tests `await` its exit instead of blocking a cooperative thread
/// in `Process.waitUntilExit()` (which on Linux also depends on Foundation noticing the exit,
/// and a child started at the same moment by another test can hold that notice back).
///
/// Every child is recorded until it is reaped, so the test watchdog can kill them all before
/// it ends a hung run (see docs/concurrency.md).
public final class ChildProcess: Sendable {
  /// How the child ended.
  public enum Termination: Equatable, Sendable, CustomStringConvertible {
    case exited(Int32)
    case signalled(Int32)

    /// The exit status, or 128 + the signal (as a shell reports it).
    public var status: Int32 {
      switch self {
      case .exited(let code): return code
      case .signalled(let signal): return 128 + signal
      }
    }

    public var description: String {
      switch self {
      case .exited(let code): return "exit \(code)"
      case .signalled(let signal): return "signal \(signal)"
      }
    }
  }

  /// Where one of the child's standard streams goes.
  public enum Stream: Sendable {
    /// `/dev/null`.
    case null
    /// A file: read from (standard input) or created and truncated (output).
    case file(String)
    /// An open descriptor of this process, duplicated into the child.
    case descriptor(Int32)
  }

  public struct SpawnError: Error, CustomStringConvertible {
    public var executable: String
    public var code: Int32
    public var description: String {
      "could not start \(executable): \(String(cString: strerror(code))) (errno \(code))"
    }
  }

  private struct State {
    var termination: Termination?
    var ended: ContinuousClock.Instant?
    var waiters: [CheckedContinuation<Termination, Never>] = []
  }

  public let pid: pid_t
  public let executable: String
  /// When the child was started.
  public let started: ContinuousClock.Instant
  private let state = Mutex(State())

  private static let live = Mutex<Set<pid_t>>([])

  /// Starts `executable` (a path) with `arguments`. `environment` replaces this process's
  /// environment when given; `directory` is the child's working directory.
  public init(
    _ executable: String, arguments: [String] = [], environment: [String: String]? = nil,
    directory: String? = nil, standardInput: Stream = .null, standardOutput: Stream = .null,
    standardError: Stream = .null
  ) throws {
    self.executable = executable
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    for (descriptor, stream) in [(Int32(0), standardInput), (1, standardOutput), (2, standardError)] {
      let writing = descriptor != 0
      switch stream {
      case .null:
        posix_spawn_file_actions_addopen(&actions, descriptor, "/dev/null", writing ? O_WRONLY : O_RDONLY, 0)
      case .file(let path):
        let flags = writing ? O_WRONLY | O_CREAT | O_TRUNC : O_RDONLY
        posix_spawn_file_actions_addopen(&actions, descriptor, path, flags, 0o644)
      case .descriptor(let source):
        posix_spawn_file_actions_adddup2(&actions, source, descriptor)
      }
    }
    // Tests spawn children at the same time from several threads: a child keeps none of the
    // descriptors other tests hold open (a pseudo-terminal's ends, pipes), so a terminal
    // hangs up and a pipe ends when its own child exits. glibc 2.34's
    // posix_spawn_file_actions_addclosefrom_np is hidden from Swift's Glibc module.
    typealias AddCloseFrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32
    if let symbol = dlsym(nil, "posix_spawn_file_actions_addclosefrom_np") {
      _ = unsafeBitCast(symbol, to: AddCloseFrom.self)(&actions, 3)
    }
    if let directory {
      // glibc 2.29's posix_spawn_file_actions_addchdir_np is hidden from Swift's Glibc module.
      typealias AddChdir =
        @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, UnsafePointer<CChar>) -> Int32
      guard let symbol = dlsym(nil, "posix_spawn_file_actions_addchdir_np") else {
        throw SpawnError(executable: executable, code: ENOSYS)
      }
      _ = unsafeBitCast(symbol, to: AddChdir.self)(&actions, directory)
    }
    let argv = ([executable] + arguments).map { strdup($0) } + [nil]
    defer { for pointer in argv { free(pointer) } }
    let environmentList = (environment ?? ProcessInfo.processInfo.environment).map { "\($0.key)=\($0.value)" }
    let envp = environmentList.map { strdup($0) } + [nil]
    defer { for pointer in envp { free(pointer) } }
    var child: pid_t = 0
    let code = argv.withUnsafeBufferPointer { argvBuffer in
      envp.withUnsafeBufferPointer { envpBuffer in
        posix_spawn(
          &child, executable, &actions, nil, UnsafeMutablePointer(mutating: argvBuffer.baseAddress!),
          UnsafeMutablePointer(mutating: envpBuffer.baseAddress!))
      }
    }
    guard code == 0 else { throw SpawnError(executable: executable, code: code) }
    pid = child
    started = .now
    Self.live.withLock { _ = $0.insert(child) }
    let reaper = Thread { [self] in reap() }
    reaper.name = "engram.test-reaper"
    reaper.start()
  }

  deinit {
    // A child nobody waited for is killed; its reaper thread still collects it.
    if state.withLock({ $0.termination == nil }) { signalProcess(pid, SIGKILL) }
  }

  /// Whether the child has not yet been reaped.
  public var isRunning: Bool { state.withLock { $0.termination == nil } }

  /// How the child ended, if it has.
  public var termination: Termination? { state.withLock { $0.termination } }

  /// How long the child ran, from its start to its reaping (nil while it runs): its own time,
  /// not the time until an awaiting test was scheduled again, which under a full parallel run
  /// can be much longer.
  public var lifetime: Duration? { state.withLock { $0.ended.map { $0 - started } } }

  /// Sends `signal` (unless the child was already reaped, so a reused pid is never hit).
  public func send(_ signal: Int32) {
    state.withLock { state in
      if state.termination == nil { signalProcess(pid, signal) }
    }
  }

  /// Waits, suspended, until the child ends.
  public func exit() async -> Termination {
    await withCheckedContinuation { continuation in
      let ended = state.withLock { state -> Termination? in
        if let termination = state.termination { return termination }
        state.waiters.append(continuation)
        return nil
      }
      if let ended { continuation.resume(returning: ended) }
    }
  }

  /// Waits up to `limit` for the child to end; kills it (SIGKILL) and returns nil if it had not.
  public func exit(within limit: Duration) async -> Termination? {
    let clock = ContinuousClock()
    let deadline = clock.now + limit
    while clock.now < deadline {
      if let termination { return termination }
      try? await Task.sleep(for: .milliseconds(10))
    }
    if let termination { return termination }
    send(SIGKILL)
    _ = await exit()
    return nil
  }

  /// Kills the child (SIGKILL) and waits until it is reaped; returns whether the kill ended it
  /// (rather than its having exited on its own before).
  @discardableResult
  public func kill() async -> Bool {
    send(SIGKILL)
    return await exit() == .signalled(SIGKILL)
  }

  /// Kills the child (SIGKILL) `delay` after now, timed on a dispatch timer rather than by this
  /// task waking up (under a full parallel run a cooperative thread can come seconds late), and
  /// awaits its reaping; returns whether the kill ended it (it may have exited before).
  @discardableResult
  public func kill(after delay: Duration) async -> Bool {
    let (seconds, attoseconds) = delay.components
    let nanoseconds = Int(seconds) * 1_000_000_000 + Int(attoseconds / 1_000_000_000)
    DispatchQueue.global(qos: .userInitiated).asyncAfter(deadline: .now() + .nanoseconds(nanoseconds)) {
      [self] in send(SIGKILL)
    }
    return await exit() == .signalled(SIGKILL)
  }

  /// Kills every child not yet reaped (the watchdog does this before it ends a hung run).
  public static func killAll() {
    for pid in live.withLock({ $0 }) { signalProcess(pid, SIGKILL) }
  }

  private func reap() {
    var status: Int32 = 0
    while waitpid(pid, &status, 0) < 0 {
      if errno != EINTR {
        status = -1
        break
      }
    }
    let termination: Termination
    if status == -1 {
      termination = .exited(-1)
    } else if status & 0x7f == 0 {
      termination = .exited((status >> 8) & 0xff)
    } else {
      termination = .signalled(status & 0x7f)
    }
    let ended = ContinuousClock.now
    let waiters = state.withLock { state -> [CheckedContinuation<Termination, Never>] in
      state.termination = termination
      state.ended = ended
      defer { state.waiters = [] }
      return state.waiters
    }
    _ = Self.live.withLock { $0.remove(pid) }
    for waiter in waiters { waiter.resume(returning: termination) }
  }
}

extension ChildProcess {
  /// What ``run(_:arguments:input:environment:directory:)`` collected.
  public struct Output: Sendable {
    public var termination: Termination
    public var standardOutput: String
    public var standardError: String
    /// How long the child ran (``ChildProcess/lifetime``).
    public var lifetime: Duration
    public var status: Int32 { termination.status }
  }

  /// One-shot children running at once (`run`), at most `limit`.
  ///
  /// Swift Testing starts every test at once, and a test awaiting its child holds no
  /// thread: without a bound, dozens of debug-built `engram` processes start together on two
  /// cores, each spending seconds of CPU on start-up, and the tests that measure a child's
  /// own timing or wait for a terminal's prompt see minutes of scheduling delay. A test
  /// waits at most `longestWait` for a slot, then runs anyway (a test that runs two children
  /// at once can never deadlock on the bound).
  static let running = Mutex(0)
  static let limit = max(4, 2 * ProcessInfo.processInfo.activeProcessorCount)
  static let longestWait: Duration = .seconds(60)

  /// Takes a slot when one frees within `longestWait`; returns whether it took one.
  static func takeSlot() async -> Bool {
    let start = ContinuousClock.now
    while ContinuousClock.now - start < longestWait {
      let taken = running.withLock { count in
        guard count < limit else { return false }
        count += 1
        return true
      }
      if taken { return true }
      try? await Task.sleep(for: .milliseconds(25))
    }
    return false
  }

  /// Runs `executable` to the end with `input` on its standard input; output goes through
  /// temporary files, so a chatty child never blocks on a full pipe. At most `limit` run at
  /// once (see `running`).
  public static func run(
    _ executable: String, arguments: [String] = [], input: String? = nil,
    environment: [String: String]? = nil, directory: String? = nil
  ) async throws -> Output {
    let slot = await takeSlot()
    do {
      let output = try await runNow(
        executable, arguments: arguments, input: input, environment: environment, directory: directory)
      if slot { running.withLock { $0 -= 1 } }
      return output
    } catch {
      if slot { running.withLock { $0 -= 1 } }
      throw error
    }
  }

  static func runNow(
    _ executable: String, arguments: [String], input: String?, environment: [String: String]?,
    directory: String?
  ) async throws -> Output {
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent(
      "engram-child-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: folder) }
    let inputPath = folder.appendingPathComponent("stdin").path
    let outputPath = folder.appendingPathComponent("stdout").path
    let errorPath = folder.appendingPathComponent("stderr").path
    try Data((input ?? "").utf8).write(to: URL(fileURLWithPath: inputPath))
    let child = try ChildProcess(
      executable, arguments: arguments, environment: environment, directory: directory,
      standardInput: .file(inputPath), standardOutput: .file(outputPath), standardError: .file(errorPath))
    let termination = await child.exit()
    return Output(
      termination: termination,
      standardOutput: readText(outputPath), standardError: readText(errorPath),
      lifetime: child.lifetime ?? .zero)
  }

  /// The file's text so far (empty when it cannot be read).
  public static func readText(_ path: String) -> String {
    guard let handle = FileHandle(forReadingAtPath: path) else { return "" }
    defer { try? handle.close() }
    return String(decoding: (try? handle.readToEnd()) ?? Data(), as: UTF8.self)
  }
}

/// `kill(2)`, named apart from ``ChildProcess/kill()``.
private func signalProcess(_ pid: pid_t, _ signal: Int32) {
  _ = kill(pid, signal)
}
