import Foundation

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// What the standard streams are connected to, and how wide and colourful output may be.
public struct Terminal: Sendable, Hashable {
  /// Whether standard input is a terminal (prompts are shown only then).
  public var isInputTerminal: Bool
  /// Whether standard output is a terminal.
  public var isOutputTerminal: Bool
  /// Whether standard error is a terminal (progress bars are drawn only then).
  public var isErrorTerminal: Bool
  /// The width in columns used to trim tables and progress lines.
  public var width: Int
  /// Whether colour is allowed at all (`NO_COLOR` unset, `TERM` not `dumb`).
  public var allowsColor: Bool

  /// The width used when nothing says otherwise.
  public static let defaultWidth = 80

  /// Creates a description of the streams (for tests: pipes, 80 columns, no colour by default).
  public init(
    isInputTerminal: Bool = false, isOutputTerminal: Bool = false, isErrorTerminal: Bool = false,
    width: Int = Terminal.defaultWidth, allowsColor: Bool = false
  ) {
    self.isInputTerminal = isInputTerminal
    self.isOutputTerminal = isOutputTerminal
    self.isErrorTerminal = isErrorTerminal
    self.width = width
    self.allowsColor = allowsColor
  }

  /// Probes this process's streams: `isatty`, the window size, `$COLUMNS`, `NO_COLOR`, `TERM`.
  public static func current(environment: [String: String]) -> Terminal {
    let size = windowWidth(fileDescriptor: 1) ?? windowWidth(fileDescriptor: 2)
    return Terminal(
      isInputTerminal: isatty(0) == 1, isOutputTerminal: isatty(1) == 1, isErrorTerminal: isatty(2) == 1,
      width: resolveWidth(windowColumns: size, environment: environment),
      allowsColor: colorAllowed(environment: environment))
  }

  /// The window's columns if positive, else a positive `$COLUMNS`, else 80.
  static func resolveWidth(windowColumns: Int?, environment: [String: String]) -> Int {
    if let windowColumns, windowColumns > 0 { return windowColumns }
    if let columns = environment["COLUMNS"].flatMap({ Int($0) }), columns > 0 { return columns }
    return defaultWidth
  }

  /// `NO_COLOR` (any non-empty value, per no-color.org) and `TERM=dumb` turn colour off.
  static func colorAllowed(environment: [String: String]) -> Bool {
    if let noColor = environment["NO_COLOR"], !noColor.isEmpty { return false }
    return environment["TERM"] != "dumb"
  }

  private static func windowWidth(fileDescriptor: Int32) -> Int? {
    guard isatty(fileDescriptor) == 1 else { return nil }
    var size = winsize()
    #if canImport(Darwin)
      let result = ioctl(fileDescriptor, TIOCGWINSZ, &size)
    #else
      let result = ioctl(fileDescriptor, UInt(TIOCGWINSZ), &size)
    #endif
    guard result == 0, size.ws_col > 0 else { return nil }
    return Int(size.ws_col)
  }

  /// Whether to colour standard output.
  public var colorsOutput: Bool { allowsColor && isOutputTerminal }
  /// Whether to colour standard error.
  public var colorsError: Bool { allowsColor && isErrorTerminal }
}

/// ANSI text styles, applied only where colour is on.
public enum TextStyle: String, Sendable, CaseIterable {
  /// Bold.
  case bold = "1"
  /// Dim.
  case dim = "2"
  /// Red (errors).
  case red = "31"
  /// Green (success).
  case green = "32"
  /// Yellow (warnings).
  case yellow = "33"
  /// Cyan (ids, names).
  case cyan = "36"

  /// `text` wrapped in this style's escape codes when `enabled`, else unchanged.
  public func apply(to text: String, enabled: Bool) -> String {
    enabled && !text.isEmpty ? "\u{1B}[\(rawValue)m\(text)\u{1B}[0m" : text
  }
}
