import Synchronization

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// This process's read-only readers that map a file's wal-index read-only (`readonly_shm`,
/// see `Connection.OpenMode.readOnlyNoTrace`).
///
/// SQLite keeps one wal-index mapping per file and process, made by the first connection
/// that needs it and shared by the later ones: a read-write connection opened while such
/// a reader is open would get the read-only mapping and could not write. So a read-write
/// `Database` of a file closes this process's read-only readers of it first (each after
/// the read it is running), opens its own connections, and reopens the readers, which
/// then share the writer's mapping. Readers opened while a writer is open share its
/// mapping from the start.
enum SharedReaders {
  struct FileKey: Hashable {
    var device: UInt64
    var inode: UInt64
  }

  /// A read-only reader slot, held weakly (its `Database` owns it), and how to reopen it.
  struct Entry: @unchecked Sendable {
    weak var slot: ConnectionSlot?
    var path: String
    var configuration: Database.Configuration
  }

  private static let registry = Mutex<[FileKey: [Entry]]>([:])

  static func key(_ path: String) -> FileKey? {
    var info = stat()
    guard stat(path, &info) == 0 else { return nil }
    return FileKey(device: UInt64(info.st_dev), inode: UInt64(info.st_ino))
  }

  /// Opens a read-only database's readers with `open` and records those that share the
  /// wal-index read-only.
  static func openReadOnly(
    _ path: String, _ configuration: Database.Configuration, _ open: () throws -> [Connection]
  ) throws -> [ConnectionSlot] {
    try registry.withLock { registry in
      let connections = try open()
      let slots = connections.map { ConnectionSlot($0) }
      let shared = zip(connections, slots).filter { $0.0.openStrategy == .sharedReadOnly }.map(\.1)
      if !shared.isEmpty, let key = key(path) {
        var entries = registry[key, default: []].filter { $0.slot != nil }
        entries += shared.map { Entry(slot: $0, path: path, configuration: configuration) }
        registry[key] = entries
      }
      return slots
    }
  }

  /// Opens a read-write database's connections with `open` while this process's read-only
  /// readers of the same file are closed; reopens them afterwards.
  static func openReadWrite(
    _ path: String, _ open: () throws -> (Connection, [Connection])
  ) throws -> ConnectionSet {
    try registry.withLock { registry in
      guard let key = key(path), let entries = registry[key] else { return ConnectionSet(try open()) }
      let live = entries.compactMap { entry in entry.slot.map { ($0, entry) } }
      registry[key] = live.isEmpty ? nil : live.map(\.1)
      return try suspending(live[...]) { ConnectionSet(try open()) }
    }
  }

  /// Runs `body` with the readers of `entries` closed, reopening each that was open.
  private static func suspending(
    _ entries: ArraySlice<(ConnectionSlot, Entry)>, _ body: () throws -> ConnectionSet
  ) throws -> ConnectionSet {
    guard let (slot, entry) = entries.first else { return try body() }
    return try slot.mutex.withLock { box in
      let wasOpen = box != nil
      box = nil
      defer {
        if wasOpen {
          // A reader that cannot be reopened stays closed (its reads throw `closed`).
          box = (try? Database.openReadOnlyReader(entry.path, entry.configuration)).map(ConnectionBox.init)
        }
      }
      return try suspending(entries.dropFirst(), body)
    }
  }

  /// A writer and its readers, carried out of the registry's lock.
  struct ConnectionSet: @unchecked Sendable {
    var writer: Connection
    var readers: [Connection]
    init(_ connections: (Connection, [Connection])) {
      writer = connections.0
      readers = connections.1
    }
  }
}
