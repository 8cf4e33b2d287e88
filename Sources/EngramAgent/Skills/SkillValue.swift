import Foundation

/// One argument value, typed as the input schema's parameter types.
public enum SkillValue: Sendable, Hashable, CustomStringConvertible {
  /// Text.
  case string(String)
  /// A whole number.
  case int(Int)
  /// A finite floating-point number.
  case number(Double)
  /// A truth value.
  case bool(Bool)
  /// An instant.
  case date(Date)

  /// The value as text, if it is text.
  public var stringValue: String? {
    if case .string(let value) = self { return value }
    return nil
  }

  /// The value as a whole number, if it is one.
  public var intValue: Int? {
    if case .int(let value) = self { return value }
    return nil
  }

  /// The value as a number, widening whole numbers.
  public var numberValue: Double? {
    switch self {
    case .number(let value): return value
    case .int(let value): return Double(value)
    default: return nil
    }
  }

  /// The value as a truth value, if it is one.
  public var boolValue: Bool? {
    if case .bool(let value) = self { return value }
    return nil
  }

  /// The value as an instant, if it is one.
  public var dateValue: Date? {
    if case .date(let value) = self { return value }
    return nil
  }

  /// A compact rendering (dates in ISO 8601, UTC).
  public var description: String {
    switch self {
    case .string(let value): return value
    case .int(let value): return String(value)
    case .number(let value): return String(value)
    case .bool(let value): return String(value)
    case .date(let value): return value.formatted(.iso8601)
    }
  }
}

/// Named argument values for one skill call.
public struct SkillArguments: Sendable, Hashable, ExpressibleByDictionaryLiteral {
  /// The values by parameter name.
  public var values: [String: SkillValue]

  /// Creates arguments from a dictionary.
  public init(_ values: [String: SkillValue] = [:]) { self.values = values }

  /// Creates arguments from a dictionary literal.
  public init(dictionaryLiteral elements: (String, SkillValue)...) {
    self.values = Dictionary(elements, uniquingKeysWith: { _, last in last })
  }

  /// The value for `name`, or nil.
  public subscript(name: String) -> SkillValue? {
    get { values[name] }
    set { values[name] = newValue }
  }

  /// True when no argument is set.
  public var isEmpty: Bool { values.isEmpty }

  /// The parameter names, sorted, for stable rendering.
  public var names: [String] { values.keys.sorted() }
}
