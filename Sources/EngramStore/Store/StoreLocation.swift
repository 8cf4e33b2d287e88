import Foundation

/// Where a memory lives, as given to `--db`, `$ENGRAM_DB` or `MemoryEngine(location:)`: a
/// SQLite file path, or a PostgreSQL connection URI (`postgresql://` or `postgres://`, any
/// libpq URI).
public enum StoreLocation: Sendable, Hashable, CustomStringConvertible {
  /// A SQLite database file (or SQLite's `:memory:` / `file:` forms).
  case sqlite(path: String)
  /// A PostgreSQL database, by its libpq connection URI (it may hold a password: show
  /// `description`, never the URI itself).
  case postgres(uri: String)

  /// The URI schemes of PostgreSQL locations (matched without regard to case).
  public static let postgresSchemes = ["postgresql", "postgres"]

  /// Parses a location: a `postgresql://` or `postgres://` URI is PostgreSQL; another
  /// `scheme://` form is refused; anything else is a SQLite path.
  /// - Throws: `StoreError.invalidLocation` for an empty location, another URI scheme, or a
  ///   PostgreSQL URI without anything after the scheme.
  public init(parsing text: String) throws {
    guard !text.isEmpty else { throw StoreError.invalidLocation(text, reason: "the location is empty") }
    if let range = text.range(of: "://"), let scheme = Self.scheme(text[..<range.lowerBound]) {
      guard Self.postgresSchemes.contains(scheme) else {
        throw StoreError.invalidLocation(
          Self.redacted(text),
          reason: "unknown scheme '\(scheme)': give a SQLite file path or a postgresql:// URI")
      }
      guard range.upperBound < text.endIndex else {
        throw StoreError.invalidLocation(text, reason: "the PostgreSQL URI names no server or database")
      }
      self = .postgres(uri: text)
      return
    }
    self = .sqlite(path: text)
  }

  /// Whether `text` has the form of a URI `scheme://...` (rather than a file path).
  public static func isURI(_ text: String) -> Bool {
    guard let range = text.range(of: "://") else { return false }
    return scheme(text[..<range.lowerBound]) != nil
  }

  /// The lowercased scheme when `prefix` is a URI scheme (a letter, then letters, digits,
  /// `+`, `-`, `.`), else nil.
  private static func scheme(_ prefix: Substring) -> String? {
    guard let first = prefix.unicodeScalars.first, first.isASCII, CharacterSet.letters.contains(first),
      prefix.unicodeScalars.allSatisfy({
        $0.isASCII && (CharacterSet.alphanumerics.contains($0) || "+-.".unicodeScalars.contains($0))
      })
    else { return nil }
    return prefix.lowercased()
  }

  /// The location for messages: the path, or the URI with any password replaced by `***`.
  public var description: String {
    switch self {
    case .sqlite(let path): path
    case .postgres(let uri): Self.redacted(uri)
    }
  }

  /// `uri` with the password of its `user:password@` part (and a `password=` parameter)
  /// replaced by `***`.
  public static func redacted(_ uri: String) -> String {
    guard let schemeEnd = uri.range(of: "://") else { return uri }
    var result = uri
    let rest = uri[schemeEnd.upperBound...]
    let authorityEnd = rest.firstIndex(where: { $0 == "/" || $0 == "?" }) ?? rest.endIndex
    if let at = rest[..<authorityEnd].lastIndex(of: "@"),
      let colon = rest[..<at].firstIndex(of: ":")
    {
      result = String(uri[..<rest.index(after: colon)]) + "***" + String(uri[at...])
    }
    if let parameter = result.range(of: "password=", options: .caseInsensitive) {
      let valueEnd = result[parameter.upperBound...].firstIndex(of: "&") ?? result.endIndex
      result.replaceSubrange(parameter.upperBound..<valueEnd, with: "***")
    }
    return result
  }
}

/// Opens the store at a location: the one place that knows the concrete stores.
public enum StoreFactory {
  /// How to open a store.
  public struct Options: Sendable {
    /// The user whose rows the store's sessions see (validated, see `StoreUser`).
    public var user: String = StoreUser.defaultID
    /// Open read-only: nothing is written, and no migration runs.
    public var readOnly = false
    /// How long a statement waits for another writer's lock.
    public var busyTimeout: Duration = .seconds(5)
    /// Reader connections (at least 1).
    public var readerCount = 2
    /// SQLite's page cache per connection in KiB. Default 16 MiB.
    public var cacheSizeKiB = 16 * 1024
    /// For a PostgreSQL location: the pool of connections to use instead of the store's own
    /// (`PostgresConnectionPool`; its URI is used, `readOnly` is the pool's). Default none.
    public var connectionPool: (any StoreConnectionPool)?

    /// The default options.
    public init() {}
  }

  /// Opens (creating and migrating a SQLite file when needed) the store at `location`.
  /// - Throws: `StoreError.invalidUser`; `StoreError.storeUnavailable` for a PostgreSQL
  ///   location when no PostgreSQL store is registered (`StoreBackends`: link EngramPostgres);
  ///   the store's own open errors.
  public static func open(_ location: StoreLocation, options: Options = Options()) throws -> any MemoryStore {
    let user = try StoreUser.validated(options.user)
    switch location {
    case .sqlite(let path):
      var configuration = Database.Configuration()
      configuration.readOnly = options.readOnly
      configuration.busyTimeout = options.busyTimeout
      configuration.readerCount = options.readerCount
      configuration.cacheSizeKiB = options.cacheSizeKiB
      configuration.user = user
      return try Database(path: path, configuration: configuration)
    case .postgres(let uri):
      if let pool = options.connectionPool { return try pool.openStore(user: user) }
      var options = options
      options.user = user
      return try StoreBackends.postgres(uri).open(uri: uri, options: options)
    }
  }
}
