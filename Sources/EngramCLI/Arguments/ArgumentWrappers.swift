/// A named option taking a value: `@Option(short: "k", help: "How many hits.") var limit = 10`.
///
/// The value's type decides what the parser accepts (``ExpressibleByArgument``); a default
/// value is shown in help; an optional is `nil` when the option is not given; an array
/// collects a repeated option (`--tag a --tag b`). Given twice, a single-valued option keeps
/// the last value.
@propertyWrapper
public struct Option<Value: Sendable>: Sendable {
  /// The value: the default until a command line is decoded.
  public var wrappedValue: Value
  let name: String?
  let short: Character?
  let kind: ValueKind
  let valueName: String?
  let isRepeating: Bool
  let help: String
  let defaultDescription: String?
  let read: @Sendable ([ArgumentValue]) -> Value?

  /// An option with a default (`var limit = 10`), shown in help unless `defaultDescription`
  /// says otherwise.
  public init(
    wrappedValue: Value, name: String? = nil, short: Character? = nil, valueName: String? = nil, help: String,
    defaultDescription: String? = nil
  ) where Value: ExpressibleByArgument {
    self.wrappedValue = wrappedValue
    self.name = name
    self.short = short
    self.kind = Value.valueKind
    self.valueName = valueName
    self.isRepeating = false
    self.help = help
    self.defaultDescription = defaultDescription ?? wrappedValue.defaultValueDescription
    self.read = { values in values.last.flatMap(Value.init(argument:)) }
  }

  /// An option that may be left out (`var now: String?`); `defaultDescription` says what its
  /// absence means, when help should.
  public init<Wrapped: ExpressibleByArgument>(
    name: String? = nil, short: Character? = nil, valueName: String? = nil, help: String,
    defaultDescription: String? = nil
  ) where Value == Wrapped? {
    self.wrappedValue = nil
    self.name = name
    self.short = short
    self.kind = Wrapped.valueKind
    self.valueName = valueName
    self.isRepeating = false
    self.help = help
    self.defaultDescription = defaultDescription
    self.read = { values in values.last.flatMap(Wrapped.init(argument:)).map { .some($0) } }
  }

  /// A repeatable option collecting every value in order (`var tag: [String] = []`).
  public init<Element: ExpressibleByArgument>(
    wrappedValue: Value, name: String? = nil, short: Character? = nil, valueName: String? = nil, help: String
  ) where Value == [Element] {
    self.wrappedValue = wrappedValue
    self.name = name
    self.short = short
    self.kind = Element.valueKind
    self.valueName = valueName
    self.isRepeating = true
    self.help = help
    self.defaultDescription = nil
    self.read = { values in values.isEmpty ? nil : values.compactMap(Element.init(argument:)) }
  }
}

/// A flag, present or absent: `@Flag(short: "y", help: "Do not ask.") var yes = false`.
@propertyWrapper
public struct Flag: Sendable {
  /// Whether the flag was given.
  public var wrappedValue: Bool
  let name: String?
  let short: Character?
  let help: String

  /// A flag, off unless given.
  public init(wrappedValue: Bool = false, name: String? = nil, short: Character? = nil, help: String) {
    self.wrappedValue = wrappedValue
    self.name = name
    self.short = short
    self.help = help
  }
}

/// A positional argument: `@Argument(help: "The export file.") var file: String`.
///
/// Without a default it is required; an optional may be left out; an array takes every
/// remaining positional (required unless declared `= []`), so only the last may be an array.
@propertyWrapper
public struct Argument<Value: Sendable>: Sendable {
  var value: Value?
  let name: String?
  let kind: ValueKind
  let isOptional: Bool
  let isRepeating: Bool
  let help: String
  let read: @Sendable ([ArgumentValue]) -> Value?

  /// The value; a required argument has one once a command line is decoded.
  public var wrappedValue: Value {
    get {
      guard let value else { preconditionFailure("the required argument has not been decoded") }
      return value
    }
    set { value = newValue }
  }

  /// A required argument.
  public init(name: String? = nil, help: String) where Value: ExpressibleByArgument {
    self.value = nil
    self.name = name
    self.kind = Value.valueKind
    self.isOptional = false
    self.isRepeating = false
    self.help = help
    self.read = { values in values.last.flatMap(Value.init(argument:)) }
  }

  /// An argument that may be left out.
  public init<Wrapped: ExpressibleByArgument>(name: String? = nil, help: String) where Value == Wrapped? {
    self.value = .some(nil)
    self.name = name
    self.kind = Wrapped.valueKind
    self.isOptional = true
    self.isRepeating = false
    self.help = help
    self.read = { values in values.last.flatMap(Wrapped.init(argument:)).map { .some($0) } }
  }

  /// One or more arguments, collecting the remaining positionals.
  public init<Element: ExpressibleByArgument>(name: String? = nil, help: String) where Value == [Element] {
    self.init(value: nil, name: name, optional: false, help: help)
  }

  /// Any number of arguments (`var text: [String] = []`), collecting the remaining positionals.
  public init<Element: ExpressibleByArgument>(wrappedValue: Value, name: String? = nil, help: String)
  where Value == [Element] {
    self.init(value: wrappedValue, name: name, optional: true, help: help)
  }

  private init<Element: ExpressibleByArgument>(value: Value?, name: String?, optional: Bool, help: String)
  where Value == [Element] {
    self.value = value ?? []
    self.name = name
    self.kind = Element.valueKind
    self.isOptional = optional
    self.isRepeating = true
    self.help = help
    self.read = { values in values.isEmpty ? nil : values.compactMap(Element.init(argument:)) }
  }
}

/// The declarations of another ``ParsableOptions`` type, in place: `@OptionGroup var database:
/// DatabaseOptions` adds `--db` where it stands.
@propertyWrapper
public struct OptionGroup<Value: ParsableOptions>: Sendable {
  /// The group's values.
  public var wrappedValue: Value

  /// The group with its defaults.
  public init() {
    wrappedValue = Value()
  }
}

extension Option: ArgumentDeclaring {
  func definitions(propertyName: String) -> [ArgumentDefinition] {
    [
      .option(
        OptionSpec(
          name ?? ArgumentName.kebab(propertyName), short: short, kind: kind, valueName: valueName,
          repeating: isRepeating, help: help, defaultDescription: defaultDescription))
    ]
  }
}

extension Flag: ArgumentDeclaring {
  func definitions(propertyName: String) -> [ArgumentDefinition] {
    [.option(.flag(name ?? ArgumentName.kebab(propertyName), short: short, help: help))]
  }
}

extension Argument: ArgumentDeclaring {
  func definitions(propertyName: String) -> [ArgumentDefinition] {
    [
      .positional(
        PositionalSpec(
          name ?? ArgumentName.kebab(propertyName), kind: kind, optional: isOptional, repeating: isRepeating,
          help: help))
    ]
  }
}

extension OptionGroup: ArgumentDeclaring {
  func definitions(propertyName: String) -> [ArgumentDefinition] {
    Value.definitions
  }
}

// Decoding: each wrapper starts from its declared default and takes what the command line gave.

extension Option: Decodable {
  /// Reads the option's value from a parsed command line (see ``ParsableOptions/decode(_:)``).
  public init(from decoder: any Decoder) throws {
    let (declared, values): (Self, [ArgumentValue]) = try ArgumentDecoder.declaration(
      in: decoder, name: { $0.name })
    self = declared
    if let value = read(values) { wrappedValue = value }
  }
}

extension Flag: Decodable {
  /// Reads whether the flag was given (see ``ParsableOptions/decode(_:)``).
  public init(from decoder: any Decoder) throws {
    let (declared, values): (Self, [ArgumentValue]) = try ArgumentDecoder.declaration(
      in: decoder, name: { $0.name })
    self = declared
    if !values.isEmpty { wrappedValue = true }
  }
}

extension Argument: Decodable {
  /// Reads the argument's value from a parsed command line (see ``ParsableOptions/decode(_:)``).
  public init(from decoder: any Decoder) throws {
    let (declared, values): (Self, [ArgumentValue]) = try ArgumentDecoder.declaration(
      in: decoder, name: { $0.name })
    self = declared
    if let value = read(values) { self.value = value }
  }
}

extension OptionGroup: Decodable {
  /// Decodes the group from the same command line.
  public init(from decoder: any Decoder) throws {
    guard let decoder = decoder as? ArgumentDecoder else {
      throw ArgumentDeclarationError(property: decoder.codingPath.last?.stringValue ?? "?")
    }
    wrappedValue = try Value.decode(decoder.parsed)
  }
}
