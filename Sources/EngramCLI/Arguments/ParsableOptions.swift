/// A command's options, flags and positional arguments, declared once as typed properties.
///
/// The shape of swift-argument-parser's `ParsableArguments`: each stored property is an
/// ``Option``, ``Flag``, ``Argument`` or ``OptionGroup`` whose default lives in its
/// declaration. Help, usage lines and usage errors are generated from the declarations, and a
/// parsed command line is decoded into an instance, so a command reads `options.limit`, never
/// a value by name:
///
/// ```swift
/// struct Options: ParsableOptions {
///   @OptionGroup var database: DatabaseOptions
///   @Option(short: "k", valueName: "N", help: "How many hits.") var limit = 10
///   @Flag(help: ArgumentHelp.json) var json = false
///   @Argument(help: "What to look for.") var text: [String]
/// }
/// ```
///
/// A property's option name is its name in kebab case (`olderThan` is `--older-than`) unless
/// the declaration gives `name:`; declaration order is the order of help and usage.
public protocol ParsableOptions: Decodable, Sendable {
  /// The declarations with their defaults (every wrapper supplies its own initial value).
  init()
}

extension ParsableOptions {
  /// The options and flags, in declaration order (groups expanded in place).
  public static var optionSpecs: [OptionSpec] {
    definitions.compactMap {
      if case .option(let spec) = $0 { return spec }
      return nil
    }
  }

  /// The positional arguments, in declaration order.
  public static var positionalSpecs: [PositionalSpec] {
    definitions.compactMap {
      if case .positional(let spec) = $0 { return spec }
      return nil
    }
  }

  /// The values of a parsed command line, defaults where an argument was not given.
  /// - Throws: ``ArgumentDeclarationError`` when a stored property is not a declaration.
  public static func decode(_ parsed: ParsedArguments) throws -> Self {
    try Self(from: ArgumentDecoder(parsed: parsed, declarations: declarations))
  }

  /// Parses `arguments` (without the tool and command names) against these declarations.
  /// - Throws: ``UsageError`` for a bad command line; `nil` is returned for `--help`.
  static func parse(_ arguments: [String], commandName: String = "command", toolName: String = "engram")
    throws -> Self?
  {
    let configuration = CommandConfiguration(
      commandName: commandName, abstract: "", options: optionSpecs, positionals: positionalSpecs)
    switch try ArgumentParser(configuration: configuration, toolName: toolName).parse(arguments) {
    case .help: return nil
    case .run(let parsed): return try decode(parsed)
    }
  }

  /// Every declaration, flattened.
  static var definitions: [ArgumentDefinition] {
    declarations.flatMap { $0.declaration.definitions(propertyName: $0.property) }
  }

  /// The declaring wrappers of a default instance with their property names, in order.
  static var declarations: [(property: String, declaration: any ArgumentDeclaring)] {
    Mirror(reflecting: Self()).children.compactMap { child in
      // A property wrapper's storage is the property's name with an underscore in front.
      guard let label = child.label, label.hasPrefix("_"),
        let declaration = child.value as? any ArgumentDeclaring
      else { return nil }
      return (String(label.dropFirst()), declaration)
    }
  }
}

/// One declared argument as the parser sees it.
enum ArgumentDefinition: Sendable, Hashable {
  /// A named option or flag.
  case option(OptionSpec)
  /// A positional argument.
  case positional(PositionalSpec)
}

/// A property wrapper that declares arguments: what it adds to the command line, and how it
/// reads its value back.
protocol ArgumentDeclaring: Sendable {
  /// The arguments declared by the property named `propertyName`.
  func definitions(propertyName: String) -> [ArgumentDefinition]
}

/// A stored property of a ``ParsableOptions`` type that is not a declaration (a programming
/// error, reported when the command runs).
public struct ArgumentDeclarationError: Error, Sendable, Hashable, CustomStringConvertible {
  /// The property's name.
  public var property: String

  /// The problem in one sentence.
  public var description: String {
    "the command's option '\(property)' is not declared with @Option, @Flag, @Argument or @OptionGroup"
  }
}

/// Where the names of properties become option names: `olderThan` is `older-than`.
enum ArgumentName {
  /// The kebab-case form of a camel-case property name.
  static func kebab(_ property: String) -> String {
    var name = ""
    for character in property {
      if character.isUppercase {
        if !name.isEmpty { name.append("-") }
        name += character.lowercased()
      } else {
        name.append(character)
      }
    }
    return name
  }
}

/// Help texts several commands share, written once.
public enum ArgumentHelp {
  /// `--json`.
  public static let json = "Print JSON lines (one object per line)."
  /// `--now`.
  public static let now = "The clock's instant and time zone (default: now, here)."
}

/// `--db PATH`: the database file or server URI (every command touching memory declares it).
public struct DatabaseOptions: ParsableOptions {
  /// The database path or URI given, if any.
  @Option(
    valueName: "PATH",
    help: "The database file, or a postgresql:// URI (default: $ENGRAM_DB, else the per-user data folder).")
  public var db: String?

  /// No database named.
  public init() {}
}

/// `--user ID`: whose memory (the tool adds it to every command that declares `--db`).
public struct UserOptions: ParsableOptions {
  /// The user id given, if any (checked by ``CommandContext/user()``).
  @Option(
    valueName: "ID", help: "Whose memory to use (default: $ENGRAM_USER, else the default user).",
    defaultDescription: "default")
  public var user: String?

  /// No user named.
  public init() {}
}
