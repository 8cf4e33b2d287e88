import Foundation

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// The most a SQLite memory's connections hold now: each caches at most its cache size, and
/// never more than the database's files (a memory of 200 turns caches a few hundred
/// kilobytes, however large the cache it may use), besides its parsed schema and prepared
/// statements (``connectionOverhead``). Zero for PostgreSQL.
struct PageCacheEstimate: Sendable {
  /// Connections that cache pages (writer and readers).
  let connections: Int
  /// Each connection's cache size.
  let cacheBytes: Int
  /// The database file and its write-ahead log.
  let files: [String]

  static let none = PageCacheEstimate(connections: 0, cacheBytes: 0, files: [])

  /// A connection's schema and prepared statements once it has searched and written (as
  /// `sqlite3_db_status` counts them; `UserEnginesTests` checks the estimate covers them).
  static let connectionOverhead = 256 << 10

  /// The estimate now (one `stat` per file).
  var bytes: Int {
    guard connections > 0, cacheBytes > 0 else { return 0 }
    var size = 0
    for file in files {
      var status = stat()
      if stat(file, &status) == 0 { size += Int(status.st_size) }
    }
    return connections * (min(cacheBytes, size) + Self.connectionOverhead)
  }
}
