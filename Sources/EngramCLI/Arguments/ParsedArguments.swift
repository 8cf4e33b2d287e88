import Engram
import Foundation

/// The typed values of one command invocation, by option or positional name: what
/// ``ArgumentParser`` produces and ``ParsableOptions/decode(_:)`` turns into a command's
/// typed options (commands read their `Options`, never these by name).
public struct ParsedArguments: Sendable, Hashable {
  /// Values by option or positional name, in the order given.
  var values: [String: [ArgumentValue]]

  /// Creates parsed arguments from values keyed by name (for tests and tools composing commands).
  public init(values: [String: [ArgumentValue]] = [:]) {
    self.values = values
  }

  /// Whether a flag (or any option) was given.
  public func flag(_ name: String) -> Bool {
    !(values[name] ?? []).isEmpty
  }

  /// How many times a flag was given (`-vv` is 2).
  public func count(_ name: String) -> Int {
    values[name]?.count ?? 0
  }

  /// The last text value of an option or positional, if given.
  public func string(_ name: String) -> String? {
    strings(name).last
  }

  /// Every text value of a repeating option or positional, in order.
  public func strings(_ name: String) -> [String] {
    (values[name] ?? []).compactMap {
      if case .string(let text) = $0 { return text }
      return nil
    }
  }

  /// The last integer value, if given.
  public func integer(_ name: String) -> Int? {
    integers(name).last
  }

  /// Every integer value, in order.
  public func integers(_ name: String) -> [Int] {
    (values[name] ?? []).compactMap {
      if case .integer(let number) = $0 { return number }
      return nil
    }
  }

  /// The last decimal value, if given.
  public func double(_ name: String) -> Double? {
    (values[name] ?? []).compactMap {
      if case .double(let number) = $0 { return number }
      return nil
    }.last
  }

  /// The last duration in seconds, if given.
  public func duration(_ name: String) -> TimeInterval? {
    (values[name] ?? []).compactMap {
      if case .duration(let seconds) = $0 { return seconds }
      return nil
    }.last
  }

  /// The last date, if given.
  public func date(_ name: String) -> ParsedDate? {
    (values[name] ?? []).compactMap {
      if case .date(let date) = $0 { return date }
      return nil
    }.last
  }

  mutating func append(_ value: ArgumentValue, for name: String) {
    values[name, default: []].append(value)
  }

  mutating func replace(_ value: ArgumentValue, for name: String) {
    values[name] = [value]
  }
}
