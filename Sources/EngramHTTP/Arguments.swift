import EngramCore
import Foundation

/// A value an argument field can hold: it decodes, and it describes itself as JSON Schema and
/// as the words of an error sentence ("an integer", "one of hybrid, vector, keyword").
public protocol ArgumentValue: Codable, Sendable {
  /// The value's JSON Schema (`{"type": "integer"}`).
  static var jsonSchema: JSONValue { get }
  /// What a value must be, for a sentence ("'k' must be an integer").
  static var phrase: String { get }
  /// The value a field holds when its key is absent or null and it has no default: nil for
  /// an optional, no value (the field is required) otherwise.
  static var absent: Self? { get }
  /// The value as a number, for `minimum`/`maximum` checks.
  var numericValue: Double? { get }
  /// The value's length in characters when it is text, for `minLength` checks.
  var textLength: Int? { get }
  /// How a query-string parameter turns into this value's JSON (`"5"` -> `5` for an integer).
  static func json(query text: String) -> JSONValue
}

extension ArgumentValue {
  public static var absent: Self? { nil }
  public var numericValue: Double? { nil }
  public var textLength: Int? { nil }
  public static func json(query text: String) -> JSONValue { .string(text) }
}

extension String: ArgumentValue {
  public static var jsonSchema: JSONValue { ["type": "string"] }
  public static var phrase: String { "a string" }
  public var textLength: Int? { count }
}

extension Int: ArgumentValue {
  public static var jsonSchema: JSONValue { ["type": "integer"] }
  public static var phrase: String { "an integer" }
  public var numericValue: Double? { Double(self) }
  public static func json(query text: String) -> JSONValue { Int(text).map(JSONValue.int) ?? .string(text) }
}

extension Double: ArgumentValue {
  public static var jsonSchema: JSONValue { ["type": "number"] }
  public static var phrase: String { "a number" }
  public var numericValue: Double? { self }
  public static func json(query text: String) -> JSONValue {
    Double(text).map(JSONValue.double) ?? .string(text)
  }
}

extension Bool: ArgumentValue {
  public static var jsonSchema: JSONValue { ["type": "boolean"] }
  public static var phrase: String { "true or false" }
  public static func json(query text: String) -> JSONValue {
    switch text {
    case "true", "1": return true
    case "false", "0": return false
    default: return .string(text)
    }
  }
}

extension Optional: ArgumentValue where Wrapped: ArgumentValue {
  public static var jsonSchema: JSONValue { Wrapped.jsonSchema }
  public static var phrase: String { Wrapped.phrase }
  public static var absent: Self? { .some(nil) }
  public var numericValue: Double? { self?.numericValue }
  public var textLength: Int? { self?.textLength }
  public static func json(query text: String) -> JSONValue { Wrapped.json(query: text) }
}

extension Array: ArgumentValue where Element: ArgumentValue {
  public static var jsonSchema: JSONValue { ["type": "array", "items": Element.jsonSchema] }
  public static var phrase: String { "a list, each " + Element.phrase }
  /// A comma-separated list (`kinds=memory,summary`).
  public static func json(query text: String) -> JSONValue {
    .array(text.split(separator: ",").map { Element.json(query: String($0)) })
  }
}

/// An enumeration an argument names by its raw value; its schema lists the cases.
public protocol ArgumentEnum: ArgumentValue, CaseIterable, RawRepresentable where RawValue == String {}

extension ArgumentEnum {
  public static var jsonSchema: JSONValue {
    ["type": "string", "enum": .array(allCases.map { .string($0.rawValue) })]
  }
  public static var phrase: String { "one of " + allCases.map(\.rawValue).joined(separator: ", ") }
}

/// An argument decoded wrongly: the field's path (`filters.since`) and one sentence naming it.
public struct ArgumentError: Error, Sendable, Hashable, CustomStringConvertible {
  /// The field's path, dotted; empty for the arguments as a whole.
  public var path: String
  /// What is wrong after the field's name ("must be an integer").
  public var problem: String

  /// Creates an error about `path`.
  public init(path: String, _ problem: String) {
    self.path = path
    self.problem = problem
  }

  /// The sentence: `'k' must be an integer`.
  public var description: String { (path.isEmpty ? "the arguments" : "'\(path)'") + " " + problem }

  /// The error as seen from the object holding field `name`.
  func nested(in name: String) -> ArgumentError {
    ArgumentError(path: path.isEmpty ? name : name + "." + path, problem)
  }
}

/// What every field of an ``Arguments`` type tells the schema.
public protocol ArgumentFieldDescribing: Sendable {
  /// The key (the struct's coding key).
  var name: String { get }
  /// The field's JSON Schema: its value's, with the description, default and bounds.
  var schema: JSONValue { get }
  /// Whether the key must be present.
  var isRequired: Bool { get }
  /// The query-string parameter `text` as this field's JSON.
  func json(query text: String) -> JSONValue
}

/// One argument: its key, what it is for, its default (declared here and nowhere else) and its
/// bounds. Decoding reads it (``Swift/KeyedDecodingContainer/decode(_:)``) and the schema is
/// built from it, so the two never disagree.
public struct ArgumentField<Value: ArgumentValue>: ArgumentFieldDescribing {
  public let name: String
  /// What the field is for (the model or the reader sees it).
  public let summary: String?
  /// The value when the key is absent.
  public let defaultValue: Value?
  /// Inclusive numeric bounds.
  public let minimum: Double?
  public let maximum: Double?
  /// The fewest characters a string may have.
  public let minLength: Int?
  /// What a value must be, when the generated words are not the clearest.
  public let expected: String?

  /// Declares the field `key`.
  public init(
    _ key: some CodingKey, _ summary: String? = nil, default defaultValue: Value? = nil,
    minimum: Double? = nil, maximum: Double? = nil, minLength: Int? = nil, expected: String? = nil
  ) {
    self.name = key.stringValue
    self.summary = summary
    self.defaultValue = defaultValue
    self.minimum = minimum
    self.maximum = maximum
    self.minLength = minLength
    self.expected = expected
  }

  public var isRequired: Bool { defaultValue == nil && Value.absent == nil }

  /// What a value must be, with its bounds ("an integer from 1 to 100", "a positive integer").
  public var phrase: String {
    if let expected { return expected }
    let base = Value.phrase
    func number(_ value: Double) -> String { value.rounded() == value ? String(Int(value)) : String(value) }
    switch (minimum, maximum) {
    case (let low?, let high?): return "\(base) from \(number(low)) to \(number(high))"
    case (1?, nil) where base == "an integer": return "a positive integer"
    case (let low?, nil): return "\(base) of at least \(number(low))"
    case (nil, let high?): return "\(base) of at most \(number(high))"
    case (nil, nil): return minLength.map { $0 > 0 ? "a non-empty string" : base } ?? base
    }
  }

  public var schema: JSONValue {
    guard case .object(var members) = Value.jsonSchema else { return Value.jsonSchema }
    var words = summary ?? ""
    if let defaultValue, let value = try? JSONValue(parsing: Data(JSONEncoder().encode(defaultValue))) {
      members["default"] = value
      let shown = value.stringValue ?? value.jsonText
      words += (words.isEmpty ? "" : " ") + "Default \(shown)."
    }
    if !words.isEmpty { members["description"] = .string(words) }
    if let minimum {
      members["minimum"] = minimum.rounded() == minimum ? .int(Int(minimum)) : .double(minimum)
    }
    if let maximum {
      members["maximum"] = maximum.rounded() == maximum ? .int(Int(maximum)) : .double(maximum)
    }
    if let minLength { members["minLength"] = .int(minLength) }
    return .object(members)
  }

  public func json(query text: String) -> JSONValue { Value.json(query: text) }

  /// Checks a decoded value against the bounds.
  func check(_ value: Value) throws(ArgumentError) {
    if let number = value.numericValue {
      if let minimum, number < minimum { throw ArgumentError(path: name, "must be \(phrase)") }
      if let maximum, number > maximum { throw ArgumentError(path: name, "must be \(phrase)") }
    }
    if let minLength, let length = value.textLength, length < minLength {
      throw ArgumentError(path: name, "must be \(phrase)")
    }
  }
}

extension KeyedDecodingContainer {
  /// The value of `field`: its default (or nil for an optional) when absent or null.
  /// - Throws: ``ArgumentError`` naming the field when it is missing, of the wrong type or out
  ///   of bounds.
  public func decode<Value>(_ field: ArgumentField<Value>) throws -> Value {
    guard let key = Key(stringValue: field.name) else {
      throw ArgumentError(path: field.name, "is not a key")
    }
    let isNull = (try? decodeNil(forKey: key)) ?? false
    guard contains(key), !isNull else {
      if let fallback = field.defaultValue ?? Value.absent { return fallback }
      throw ArgumentError(path: field.name, "is missing; pass " + field.phrase)
    }
    let value: Value
    do {
      value = try decode(Value.self, forKey: key)
    } catch let error as ArgumentError {
      throw error.nested(in: field.name)
    } catch {
      throw ArgumentError(path: field.name, "must be \(field.phrase)")
    }
    try field.check(value)
    return value
  }
}

/// A type decoded from a JSON object whose fields are declared once (``fields``): the JSON
/// Schema (``jsonSchema``) is built from them, and `init(from:)` reads each with
/// ``Swift/KeyedDecodingContainer/decode(_:)``. MCP tool arguments and web API bodies are such
/// types; nothing reads them by string key.
public protocol Arguments: ArgumentValue {
  /// The fields, in the order the schema lists them.
  static var fields: [any ArgumentFieldDescribing] { get }
}

extension Arguments {
  /// An object with the fields as properties, the required ones listed, nothing else allowed.
  public static var jsonSchema: JSONValue {
    var properties: [String: JSONValue] = [:]
    for field in fields { properties[field.name] = field.schema }
    return [
      "type": "object", "properties": .object(properties),
      "required": .array(fields.filter(\.isRequired).map { .string($0.name) }),
      "additionalProperties": false,
    ]
  }

  public static var phrase: String { "an object" }

  /// Decodes the arguments from a JSON object's members.
  /// - Throws: ``ArgumentError``, one sentence naming the field.
  public static func decode(_ members: [String: JSONValue]) throws(ArgumentError) -> Self {
    do {
      return try JSONDecoder().decode(Self.self, from: Data(JSONValue.object(members).jsonText.utf8))
    } catch let error as ArgumentError {
      throw error
    } catch {
      throw ArgumentError(path: "", "must be a JSON object")
    }
  }

  /// Decodes the arguments from query-string parameters, each turned into its field's JSON
  /// (an integer field's `"5"` is `5`); an empty parameter counts as absent.
  /// - Throws: ``ArgumentError``, one sentence naming the field.
  public static func decode(query parameters: [String: String]) throws(ArgumentError) -> Self {
    var members: [String: JSONValue] = [:]
    for field in fields {
      guard let text = parameters[field.name], !text.isEmpty else { continue }
      members[field.name] = field.json(query: text)
    }
    return try decode(members)
  }
}
