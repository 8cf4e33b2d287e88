import EngramTestSupport
import Foundation

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// The built `engram` running on a pseudo-terminal, as a person at a terminal would run it:
/// stdin, stdout and stderr are the terminal, the test types lines and reads the screen text.
///
/// Waits have a generous deadline only so a broken build fails instead of hanging; nothing
/// asserts how long anything took.
final class PseudoTerminal {
  struct Failure: Error, CustomStringConvertible {
    var description: String
  }

  private var child: ChildProcess?
  private let master: Int32
  private var bytes: [UInt8] = []
  /// `bytes` with the terminal's `\r\n` turned into `\n`, as searched by `waitFor`.
  private var normalized: [UInt8] = []
  /// Where the next `waitFor` starts looking in `normalized`.
  private var cursor = 0
  private var closed = false
  /// How much of `bytes` is in `normalized`.
  private var consumed = 0

  /// Starts `engram arguments` on a new terminal of 100 columns with the test environment.
  init(_ arguments: [String], environment: [String: String] = ScratchFolder.environment) throws {
    master = try Self.openMaster()
    var size = winsize(ws_row: 40, ws_col: 100, ws_xpixel: 0, ws_ypixel: 0)
    let slavePath: String
    do {
      slavePath = try Self.slavePath(of: master)
    } catch {
      close(master)
      throw error
    }
    let slave = open(slavePath, O_RDWR | O_NOCTTY | O_CLOEXEC)
    guard slave >= 0 else {
      close(master)
      throw Failure(description: "cannot open the terminal's slave (errno \(errno))")
    }
    _ = ioctl(slave, UInt(TIOCSWINSZ), &size)
    var merged = ProcessInfo.processInfo.environment
    merged.merge(environment) { _, new in new }
    merged["TERM"] = "xterm"
    do {
      child = try ChildProcess(
        try EngramBinary.locate().path, arguments: arguments, environment: merged,
        standardInput: .descriptor(slave), standardOutput: .descriptor(slave),
        standardError: .descriptor(slave))
    } catch {
      close(slave)
      close(master)
      throw error
    }
    // Only the child keeps the slave open, so reading the master ends (EIO) when it exits.
    close(slave)
  }

  #if canImport(Glibc)
    // posix_openpt, grantpt, unlockpt and ptsname_r are hidden from Swift's Glibc module (they
    // need _XOPEN_SOURCE), so they are looked up in the C library that is already loaded.
    private static func libc<Function>(_ name: String, as type: Function.Type) throws -> Function {
      guard let symbol = dlsym(nil, name) else { throw Failure(description: "\(name) not found in libc") }
      return unsafeBitCast(symbol, to: type)
    }

    private static func openMaster() throws -> Int32 {
      let open = try libc("posix_openpt", as: (@convention(c) (Int32) -> Int32).self)
      let descriptor = open(O_RDWR | O_NOCTTY | O_CLOEXEC)
      guard descriptor >= 0 else { throw Failure(description: "posix_openpt failed (errno \(errno))") }
      return descriptor
    }

    private static func slavePath(of master: Int32) throws -> String {
      let grant = try libc("grantpt", as: (@convention(c) (Int32) -> Int32).self)
      let unlock = try libc("unlockpt", as: (@convention(c) (Int32) -> Int32).self)
      let name = try libc(
        "ptsname_r", as: (@convention(c) (Int32, UnsafeMutablePointer<CChar>?, Int) -> Int32).self)
      var buffer = [CChar](repeating: 0, count: 256)
      guard grant(master) == 0, unlock(master) == 0, name(master, &buffer, buffer.count) == 0 else {
        throw Failure(description: "cannot set up the terminal (errno \(errno))")
      }
      return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
  #else
    private static func openMaster() throws -> Int32 {
      let descriptor = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC)
      guard descriptor >= 0 else { throw Failure(description: "posix_openpt failed (errno \(errno))") }
      return descriptor
    }

    private static func slavePath(of master: Int32) throws -> String {
      guard grantpt(master) == 0, unlockpt(master) == 0, let name = ptsname(master) else {
        throw Failure(description: "cannot set up the terminal (errno \(errno))")
      }
      return String(cString: name)
    }
  #endif

  deinit {
    child?.send(SIGTERM)
    close(master)
  }

  /// Everything shown so far, with the terminal's `\r\n` turned into `\n`.
  var screen: String {
    String(decoding: normalized, as: UTF8.self)
  }

  /// Reads until `text` appears after the previous match; returns whether it did before the
  /// deadline or the end of output. On success the next wait starts after this match.
  @discardableResult
  func waitFor(_ text: String, deadline seconds: Double = 60) async -> Bool {
    let needle = Array(text.utf8)
    let end = Date().addingTimeInterval(seconds)
    while true {
      if let range = find(needle) {
        cursor = range
        return true
      }
      if closed || Date() >= end { return false }
      await readAvailable()
    }
  }

  /// Types `line` and Enter.
  func type(_ line: String) {
    let data = Array((line + "\n").utf8)
    _ = data.withUnsafeBytes { write(master, $0.baseAddress, $0.count) }
  }

  /// Types Ctrl-D at the start of a line: the program reads end of input.
  func endOfInput() {
    var byte: UInt8 = 4
    _ = write(master, &byte, 1)
  }

  /// Sends SIGINT to the process (what Ctrl-C does to the foreground process).
  func interrupt() {
    child?.send(SIGINT)
  }

  /// Reads the rest of the output and waits for the process; returns its status, or nil when it
  /// has not ended by the deadline (it is then terminated when `terminating`).
  func waitForExit(deadline seconds: Double = 60, terminating: Bool = true) async -> Int32? {
    guard let child else { return nil }
    let end = Date().addingTimeInterval(seconds)
    while !closed && Date() < end { await readAvailable() }
    while child.isRunning && Date() < end { try? await Task.sleep(for: .milliseconds(20)) }
    if child.isRunning {
      if terminating { child.send(SIGTERM) }
      return nil
    }
    return child.termination?.status
  }

  private func find(_ needle: [UInt8]) -> Int? {
    guard !needle.isEmpty, normalized.count - cursor >= needle.count else { return nil }
    var start = cursor
    while start + needle.count <= normalized.count {
      if normalized[start..<(start + needle.count)].elementsEqual(needle) { return start + needle.count }
      start += 1
    }
    return nil
  }

  /// Extends `normalized` with the new bytes; a trailing `\r` waits for the next read.
  private func normalize() {
    var index = consumed
    while index < bytes.count {
      let byte = bytes[index]
      if byte == UInt8(ascii: "\r") {
        guard index + 1 < bytes.count else { break }
        if bytes[index + 1] == UInt8(ascii: "\n") {
          index += 1
          continue
        }
      }
      normalized.append(byte)
      index += 1
    }
    consumed = index
  }

  /// Reads what the terminal has; when it has nothing, sleeps (suspended, not blocking a
  /// cooperative thread) for 10 ms.
  private func readAvailable() async {
    var descriptor = pollfd(fd: master, events: Int16(POLLIN), revents: 0)
    let ready = poll(&descriptor, 1, 0)
    guard ready > 0 else {
      try? await Task.sleep(for: .milliseconds(10))
      return
    }
    var buffer = [UInt8](repeating: 0, count: 4096)
    let count = buffer.withUnsafeMutableBytes { read(master, $0.baseAddress, $0.count) }
    if count > 0 {
      bytes += buffer[..<count]
      normalize()
    } else if count == 0 || (errno != EINTR && errno != EAGAIN) {
      // EIO: every copy of the slave is closed, the program has ended.
      closed = true
    }
  }
}
