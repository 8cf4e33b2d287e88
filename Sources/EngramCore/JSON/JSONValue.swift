import Foundation

/// Any JSON value, with integers kept apart from decimals so ids and counts round-trip exactly.
public enum JSONValue: Sendable, Hashable {
  /// `null`.
  case null
  /// `true` or `false`.
  case bool(Bool)
  /// A number without a fraction or exponent that fits in `Int`.
  case int(Int)
  /// Any other number.
  case double(Double)
  /// A string.
  case string(String)
  /// An array.
  case array([JSONValue])
  /// An object.
  case object([String: JSONValue])

  /// The member `key` of an object, else `nil`.
  public subscript(key: String) -> JSONValue? {
    if case .object(let members) = self { return members[key] }
    return nil
  }

  /// The element at `index` of an array, else `nil`.
  public subscript(index: Int) -> JSONValue? {
    if case .array(let elements) = self, elements.indices.contains(index) { return elements[index] }
    return nil
  }

  /// The text of a string.
  public var stringValue: String? {
    if case .string(let text) = self { return text }
    return nil
  }

  /// An integer, or a decimal with no fractional part that fits in `Int`.
  public var intValue: Int? {
    switch self {
    case .int(let number): return number
    case .double(let number):
      guard number.rounded() == number, let exact = Int(exactly: number) else { return nil }
      return exact
    default: return nil
    }
  }

  /// Any number as a `Double`.
  public var doubleValue: Double? {
    switch self {
    case .int(let number): return Double(number)
    case .double(let number): return number
    default: return nil
    }
  }

  /// The value of a boolean.
  public var boolValue: Bool? {
    if case .bool(let flag) = self { return flag }
    return nil
  }

  /// The elements of an array.
  public var arrayValue: [JSONValue]? {
    if case .array(let elements) = self { return elements }
    return nil
  }

  /// The members of an object.
  public var objectValue: [String: JSONValue]? {
    if case .object(let members) = self { return members }
    return nil
  }

  /// Whether this is `null`.
  public var isNull: Bool { self == .null }

  /// The JSON type name used in messages: `null`, `boolean`, `integer`, `number`, `string`, `array`, `object`.
  public var typeName: String {
    switch self {
    case .null: return "null"
    case .bool: return "boolean"
    case .int: return "integer"
    case .double: return "number"
    case .string: return "string"
    case .array: return "array"
    case .object: return "object"
    }
  }
}

extension JSONValue: Codable {
  /// Decodes any JSON value.
  public init(from decoder: any Decoder) throws {
    let container = try decoder.singleValueContainer()
    if container.decodeNil() {
      self = .null
    } else if let flag = try? container.decode(Bool.self) {
      self = .bool(flag)
    } else if let number = try? container.decode(Int.self) {
      self = .int(number)
    } else if let number = try? container.decode(Double.self) {
      self = .double(number)
    } else if let text = try? container.decode(String.self) {
      self = .string(text)
    } else if let elements = try? container.decode([JSONValue].self) {
      self = .array(elements)
    } else {
      self = .object(try container.decode([String: JSONValue].self))
    }
  }

  /// Encodes the value as it is.
  public func encode(to encoder: any Encoder) throws {
    var container = encoder.singleValueContainer()
    switch self {
    case .null: try container.encodeNil()
    case .bool(let flag): try container.encode(flag)
    case .int(let number): try container.encode(number)
    case .double(let number): try container.encode(number)
    case .string(let text): try container.encode(text)
    case .array(let elements): try container.encode(elements)
    case .object(let members): try container.encode(members)
    }
  }
}

extension JSONValue {
  /// Parses JSON text (UTF-8).
  /// - Throws: `ParseError` (see `parse(_:)`) when the bytes are not one JSON value.
  public init(parsing data: Data) throws(ParseError) {
    self = try Self.parse(data)
  }

  /// The value as compact JSON with sorted keys and unescaped slashes.
  /// - Throws: `EncodingError` for a NaN or infinite number.
  public func serialized() throws -> Data {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
    return try encoder.encode(self)
  }

  /// The value as compact JSON text; non-finite numbers become `null`.
  public var jsonText: String {
    let data = (try? serialized()) ?? (try? Self.replacingNonFinite(self).serialized()) ?? Data("null".utf8)
    return String(decoding: data, as: UTF8.self)
  }

  private static func replacingNonFinite(_ value: JSONValue) -> JSONValue {
    switch value {
    case .double(let number) where !number.isFinite: return .null
    case .array(let elements): return .array(elements.map(replacingNonFinite))
    case .object(let members): return .object(members.mapValues(replacingNonFinite))
    default: return value
    }
  }
}

extension JSONValue: ExpressibleByNilLiteral, ExpressibleByBooleanLiteral, ExpressibleByIntegerLiteral,
  ExpressibleByFloatLiteral, ExpressibleByStringLiteral, ExpressibleByArrayLiteral,
  ExpressibleByDictionaryLiteral
{
  /// `null`.
  public init(nilLiteral: ()) { self = .null }
  /// A boolean.
  public init(booleanLiteral value: Bool) { self = .bool(value) }
  /// An integer.
  public init(integerLiteral value: Int) { self = .int(value) }
  /// A decimal.
  public init(floatLiteral value: Double) { self = .double(value) }
  /// A string.
  public init(stringLiteral value: String) { self = .string(value) }
  /// An array.
  public init(arrayLiteral elements: JSONValue...) { self = .array(elements) }
  /// An object; a repeated key keeps its last value.
  public init(dictionaryLiteral elements: (String, JSONValue)...) {
    self = .object(Dictionary(elements, uniquingKeysWith: { _, last in last }))
  }
}

extension JSONValue {
  /// Parses JSON text (any top-level value).
  ///
  /// - Throws: `JSONValue.ParseError` with the reason when the text is not valid JSON.
  public static func parse(_ text: some StringProtocol) throws(ParseError) -> JSONValue {
    var text = String(text)
    if let value = text.withUTF8({ FastParser.parse($0) }) { return value }
    return try decodeWithJSONDecoder(Data(text.utf8))
  }

  /// Parses JSON bytes (any top-level value).
  public static func parse(_ data: Data) throws(ParseError) -> JSONValue {
    let fast = data.withUnsafeBytes { raw in
      raw.withMemoryRebound(to: UInt8.self) { FastParser.parse($0) }
    }
    if let fast { return fast }
    return try decodeWithJSONDecoder(data)
  }

  /// Parses JSON bytes in place (no copy into `Data` when the fast path applies); nil when
  /// they are not valid JSON.
  public static func parse(bytes: UnsafeBufferPointer<UInt8>) -> JSONValue? {
    FastParser.parse(bytes) ?? (try? decodeWithJSONDecoder(Data(bytes)))
  }

  /// The reference path: `JSONDecoder` through the `Decodable` conformance.
  static func decodeWithJSONDecoder(_ data: Data) throws(ParseError) -> JSONValue {
    do {
      return try JSONDecoder().decode(JSONValue.self, from: data)
    } catch let error as DecodingError {
      // Valid JSON nested deeper than the decoder reads is told as such, not as invalid.
      if let offset = nestingLimitOffset(data) {
        throw ParseError(
          reason: "the JSON is nested more than \(maxNesting) levels deep (at byte \(offset + 1))",
          tooDeepAt: offset)
      }
      switch error {
      case .dataCorrupted(let context):
        let underlying = (context.underlyingError as NSError?)?.userInfo["NSDebugDescription"] as? String
        throw ParseError(reason: underlying ?? context.debugDescription)
      default:
        throw ParseError(reason: "invalid JSON")
      }
    } catch {
      throw ParseError(reason: "invalid JSON")
    }
  }

  /// How deep arrays and objects may nest in JSON that is parsed (as `JSONDecoder` reads).
  public static let maxNesting = 512

  /// The offset of the bracket that opens level `maxNesting + 1`, if the bytes nest that deep.
  static func nestingLimitOffset(_ data: Data) -> Int? {
    data.withUnsafeBytes { raw -> Int? in
      var depth = 0
      var inString = false
      var escaped = false
      for (offset, byte) in raw.enumerated() {
        if inString {
          if escaped {
            escaped = false
          } else if byte == UInt8(ascii: "\\") {
            escaped = true
          } else if byte == UInt8(ascii: "\"") {
            inString = false
          }
          continue
        }
        switch byte {
        case UInt8(ascii: "\""): inString = true
        case UInt8(ascii: "["), UInt8(ascii: "{"):
          depth += 1
          if depth > maxNesting { return offset }
        case UInt8(ascii: "]"), UInt8(ascii: "}"): depth -= 1
        default: break
        }
      }
      return nil
    }
  }

  /// Why JSON text could not be parsed.
  public struct ParseError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The deepest nesting of arrays and objects parsed (JSONDecoder's limit).
    public static let maximumDepth = JSONValue.maxNesting
    /// Whether the text nests arrays and objects deeper than ``maximumDepth``.
    public var isNestedTooDeep: Bool { tooDeepAt != nil }
    /// The reason, one phrase.
    public var reason: String
    /// For JSON nested deeper than `JSONValue.maxNesting`: the offset of the bracket that
    /// goes too deep (the text may be valid JSON, only too deep to read); nil otherwise.
    public var tooDeepAt: Int?
    public var description: String { reason }

    /// An error with this reason.
    public init(reason: String, tooDeepAt: Int? = nil) {
      self.reason = reason
      self.tooDeepAt = tooDeepAt
    }
  }
}
