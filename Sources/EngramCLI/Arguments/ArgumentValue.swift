import Engram
import Foundation

/// One typed value produced by the parser.
public enum ArgumentValue: Sendable, Hashable {
  /// Text, or a word of a `.choice`.
  case string(String)
  /// An integer.
  case integer(Int)
  /// A finite number.
  case double(Double)
  /// A duration in seconds.
  case duration(TimeInterval)
  /// A date and whether it was given as a whole day.
  case date(ParsedDate)
  /// A flag occurrence.
  case flag
}
