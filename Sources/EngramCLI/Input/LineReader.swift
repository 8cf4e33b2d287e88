import Foundation
import Synchronization

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// Why a line could not be read.
public enum LineReaderError: Error, Sendable, Hashable {
  /// The line (1-based) is not valid UTF-8.
  case invalidUTF8(line: Int)
  /// `read(2)` failed with this errno.
  case readFailed(errno: Int32)
  /// Ctrl-C was pressed while waiting for input.
  case interrupted
}

/// Reads standard input (or any descriptor, or bytes in tests) line by line.
///
/// Works the same on a terminal and a pipe; the prompt is shown only when `showsPrompt`
/// (by default: when the descriptor is a terminal). Lines lose their `\n` / `\r\n`.
public final class LineReader: Sendable {
  private enum Source {
    case descriptor(Int32)
    case bytes
  }

  private struct State {
    var buffer: [UInt8] = []
    var start = 0
    var atEnd = false
    var lineNumber = 0
  }

  private let source: Source
  private let state: Mutex<State>
  /// Whether prompts are written before reading.
  public let showsPrompt: Bool

  /// Reads from `fileDescriptor` (not owned: never closed).
  public init(fileDescriptor: Int32, showsPrompt: Bool? = nil) {
    self.source = .descriptor(fileDescriptor)
    self.state = Mutex(State())
    self.showsPrompt = showsPrompt ?? (isatty(fileDescriptor) == 1)
  }

  /// Reads from bytes held in memory (tests, scripted input).
  public init(bytes: some Sequence<UInt8>, showsPrompt: Bool = false) {
    self.source = .bytes
    self.state = Mutex(State(buffer: Array(bytes), atEnd: true))
    self.showsPrompt = showsPrompt
  }

  /// Reads from a string held in memory.
  public convenience init(text: String, showsPrompt: Bool = false) {
    self.init(bytes: Array(text.utf8), showsPrompt: showsPrompt)
  }

  /// The next line without its terminator, or `nil` at end of input.
  /// - Parameters:
  ///   - prompt: Written to `promptOutput` first when ``showsPrompt``.
  /// - Throws: ``LineReaderError``.
  public func readLine(prompt: String? = nil, promptOutput: (any TextOutput)? = nil) throws(LineReaderError)
    -> String?
  {
    if showsPrompt, let prompt, let promptOutput { promptOutput.write(prompt) }
    let source = self.source
    return try state.withLock { state throws(LineReaderError) -> String? in
      while true {
        if let newline = state.buffer[state.start...].firstIndex(of: UInt8(ascii: "\n")) {
          var end = newline
          if end > state.start, state.buffer[end - 1] == UInt8(ascii: "\r") { end -= 1 }
          let line = Array(state.buffer[state.start..<end])
          state.start = newline + 1
          return try Self.decode(line, state: &state)
        }
        if state.atEnd {
          guard state.start < state.buffer.count else { return nil }
          let line = Array(state.buffer[state.start...])
          state.start = state.buffer.count
          return try Self.decode(line, state: &state)
        }
        guard case .descriptor(let descriptor) = source else {
          state.atEnd = true
          continue
        }
        // Compact before refilling so the buffer does not grow with the input.
        if state.start > 0 {
          state.buffer.removeFirst(state.start)
          state.start = 0
        }
        var chunk = [UInt8](repeating: 0, count: 4096)
        let count = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
        if count < 0 {
          let code = errno
          if code == EINTR {
            if Interruption.isRequested { throw .interrupted }
            continue
          }
          throw .readFailed(errno: code)
        }
        if count == 0 {
          state.atEnd = true
        } else {
          state.buffer += chunk[..<count]
        }
      }
    }
  }

  private static func decode(_ bytes: [UInt8], state: inout State) throws(LineReaderError) -> String {
    state.lineNumber += 1
    guard let line = String(validating: bytes, as: UTF8.self) else {
      throw .invalidUTF8(line: state.lineNumber)
    }
    return line
  }

  /// Asks a yes/no question; reads lines until one is y, yes, n, no (any case) or empty (no).
  ///
  /// Returns `false` at end of input or on a read error, so a script that says nothing declines.
  public func confirm(_ prompt: String, promptOutput: any TextOutput) -> Bool {
    while true {
      guard let line = try? readLine(prompt: prompt + " [y/N] ", promptOutput: promptOutput) else {
        if showsPrompt { promptOutput.write("\n") }
        return false
      }
      if let answer = Self.answer(line) { return answer }
      if showsPrompt { promptOutput.write("Please answer y or n.\n") }
    }
  }

  /// `true` for y/yes, `false` for n/no or an empty line (the default), `nil` for anything else.
  static func answer(_ line: String) -> Bool? {
    switch line.trimmingCharacters(in: .whitespaces).lowercased() {
    case "y", "yes": return true
    case "n", "no", "": return false
    default: return nil
    }
  }
}
