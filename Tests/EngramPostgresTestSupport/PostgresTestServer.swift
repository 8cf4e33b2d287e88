import EngramPostgres
import EngramStore
import Foundation
import Synchronization

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// The PostgreSQL server the PostgreSQL tests run against: `$ENGRAM_TEST_POSTGRES_URL` when set
/// (`make test` sets it to a throwaway cluster from scripts/postgres.sh), else a throwaway
/// cluster this process starts with that script on first use and removes when it exits.
/// Never skipped: when no server can be had, the tests fail saying how to get one.
public enum PostgresTestServer {
  /// Why no server is available.
  public struct Unavailable: Error, CustomStringConvertible {
    public var description: String
  }

  private static let state = Mutex<Result<String, Unavailable>?>(nil)
  /// The `stop` command run at exit (a C string, so the exit handler allocates nothing).
  nonisolated(unsafe) private static var stopCommand: UnsafeMutablePointer<CChar>?

  /// The server's libpq URL (its default database). The PostgreSQL store is registered
  /// (`PostgresBackend.register()`), so the engine opens its URLs.
  public static func url() throws -> String {
    PostgresBackend.register()
    return try state.withLock { state -> Result<String, Unavailable> in
      if let state { return state }
      let started = start()
      state = started
      return started
    }.get()
  }

  /// The repository's root folder (this file is Tests/EngramPostgresTestSupport/PostgresTestServer.swift).
  static let repositoryRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
    .deletingLastPathComponent().deletingLastPathComponent()

  private static func start() -> Result<String, Unavailable> {
    if let url = ProcessInfo.processInfo.environment["ENGRAM_TEST_POSTGRES_URL"], !url.isEmpty {
      return .success(url)
    }
    let script = repositoryRoot.appendingPathComponent("scripts/postgres.sh").path
    // popen rather than Process: the server the script leaves running must not hold a pipe
    // this process waits on. The script's diagnostics go to this process's standard error.
    // ENGRAM_PG_OWNER: if this process dies without its atexit stop, the next start sweeps it.
    guard let pipe = popen("ENGRAM_PG_OWNER=\(getpid()) '\(script)' start", "r") else {
      return .failure(Unavailable(description: "could not run \(script) (errno \(errno))"))
    }
    var text = ""
    var buffer = [CChar](repeating: 0, count: 4096)
    while fgets(&buffer, Int32(buffer.count), pipe) != nil {
      text += buffer.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
    }
    let status = pclose(pipe)
    let lines = text.split(separator: "\n").map(String.init)
    guard status == 0, lines.count == 2 else {
      return .failure(
        Unavailable(
          description: """
            no PostgreSQL server for the PostgreSQL tests: scripts/postgres.sh start failed (see its \
            messages above). Install PostgreSQL 15 or later (apt-get install postgresql, or run \
            `make setup`), or set ENGRAM_TEST_POSTGRES_URL to a server where the tests may create databases.
            """))
    }
    stopCommand = strdup("'\(script)' stop '\(lines[0])' >/dev/null 2>&1")
    atexit {
      if let command = PostgresTestServer.stopCommand { _ = system(command) }
    }
    return .success(lines[1])
  }

  /// A new, empty database on the test server, connected; dropped by `body`'s end.
  public static func withDatabase<T>(_ body: (_ connection: PostgresConnection, _ url: String) throws -> T)
    throws
    -> T
  {
    let database = try ScratchDatabase()
    defer { database.drop() }
    return try body(try PostgresConnection(url: database.url), database.url)
  }

  /// ``withDatabase(_:)`` for a body that awaits (one that polls a feed, say).
  public static func inDatabase<T>(
    _ body: (_ connection: PostgresConnection, _ url: String) async throws -> T
  )
    async throws -> T
  {
    let database = try ScratchDatabase()
    defer { database.drop() }
    return try await body(try PostgresConnection(url: database.url), database.url)
  }

  /// A database of its own on the test server, created by `init` and dropped by `drop()`.
  private struct ScratchDatabase {
    let admin: PostgresConnection
    let name = "engram_test_\(UInt64.random(in: 0...UInt64.max))"
    let url: String

    init() throws {
      let serverURL = try PostgresTestServer.url()
      admin = try PostgresConnection(url: serverURL)
      try admin.execute("CREATE DATABASE \(name)")
      url = PostgresTestServer.databaseURL(serverURL, database: name)
    }

    func drop() { _ = try? admin.execute("DROP DATABASE IF EXISTS \(name) WITH (FORCE)") }
  }

  /// A connection string for `database` on the server of `url`: a later `dbname` overrides
  /// an earlier one, in a URI's query as in a `key=value` string.
  public static func databaseURL(_ url: String, database: String) -> String {
    if url.hasPrefix("postgresql://") || url.hasPrefix("postgres://") {
      return url + (url.contains("?") ? "&" : "?") + "dbname=\(database)"
    }
    return url + " dbname=\(database)"
  }

  /// schemas/postgres/NNNN_*.sql, in order.
  public static func schemaMigrations() throws -> [(name: String, sql: String)] {
    let folder = repositoryRoot.appendingPathComponent("schemas/postgres")
    let files = try FileManager.default.contentsOfDirectory(atPath: folder.path).filter {
      $0.hasSuffix(".sql")
    }
    .sorted()
    return try files.map { ($0, try String(contentsOf: folder.appendingPathComponent($0), encoding: .utf8)) }
  }

  /// Applies every migration of schemas/postgres to `connection`'s database (with the
  /// migrator the store uses).
  public static func applySchema(_ connection: PostgresConnection) throws {
    try PostgresMigrator.migrate(connection, database: "test")
  }
}
