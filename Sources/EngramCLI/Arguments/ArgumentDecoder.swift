/// Decodes a ``ParsableOptions`` type from a parsed command line.
///
/// The type's synthesized `Decodable` conformance asks for each property by name; each
/// property wrapper then starts from its declared default (read from a default instance) and
/// takes the values the parser stored under its option name.
struct ArgumentDecoder: Decoder {
  /// What the parser produced.
  let parsed: ParsedArguments
  /// The declaring wrappers of a default instance, by property name.
  let declarations: [String: any ArgumentDeclaring]
  var codingPath: [any CodingKey] = []
  var userInfo: [CodingUserInfoKey: Any] { [:] }

  init(parsed: ParsedArguments, declarations: [(property: String, declaration: any ArgumentDeclaring)]) {
    self.parsed = parsed
    self.declarations = Dictionary(declarations.map { ($0.property, $0.declaration) }) { first, _ in first }
  }

  func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
    KeyedDecodingContainer(Properties(decoder: self))
  }

  func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
    throw ArgumentDeclarationError(property: codingPath.last?.stringValue ?? "?")
  }

  func singleValueContainer() throws -> any SingleValueDecodingContainer {
    throw ArgumentDeclarationError(property: codingPath.last?.stringValue ?? "?")
  }

  /// The declared wrapper of the property being decoded and the values given for it.
  /// - Parameter name: the wrapper's explicit option name, if it has one.
  static func declaration<Wrapper>(in decoder: any Decoder, name: (Wrapper) -> String?) throws -> (
    Wrapper, [ArgumentValue]
  ) {
    let property = decoder.codingPath.last?.stringValue ?? "?"
    guard let decoder = decoder as? ArgumentDecoder, let declared = decoder.declarations[property] as? Wrapper
    else { throw ArgumentDeclarationError(property: property) }
    let key = name(declared) ?? ArgumentName.kebab(property)
    return (declared, decoder.parsed.values[key] ?? [])
  }

  /// The properties of one options type; only property wrappers can be decoded.
  struct Properties<Key: CodingKey>: KeyedDecodingContainerProtocol {
    let decoder: ArgumentDecoder
    var codingPath: [any CodingKey] { decoder.codingPath }
    var allKeys: [Key] { decoder.declarations.keys.compactMap { Key(stringValue: $0) } }

    func contains(_ key: Key) -> Bool { decoder.declarations[key.stringValue] != nil }

    func decodeNil(forKey key: Key) throws -> Bool { false }

    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
      var nested = decoder
      nested.codingPath.append(key)
      return try T(from: nested)
    }

    func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws
      -> KeyedDecodingContainer<NestedKey>
    {
      throw ArgumentDeclarationError(property: key.stringValue)
    }

    func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
      throw ArgumentDeclarationError(property: key.stringValue)
    }

    func superDecoder() throws -> any Decoder { throw ArgumentDeclarationError(property: "super") }

    func superDecoder(forKey key: Key) throws -> any Decoder {
      throw ArgumentDeclarationError(property: key.stringValue)
    }
  }
}
