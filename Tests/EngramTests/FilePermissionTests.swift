import EngramTestSupport
import Foundation
import Testing

@testable import Engram

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// A memory is private: its database, WAL, index snapshot and exports are readable by the
/// owner only, whatever the umask.
@Suite(.serialized, .timeLimit(.minutes(5)), .watchdog) struct FilePermissionTests {
  static func permissions(_ path: String) -> Int? {
    (try? FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int) ?? nil
  }

  @Test func databaseSnapshotAndExportAreOwnerOnlyUnderUmask022() async throws {
    let previous = umask(0o022)
    defer { umask(previous) }
    let folder = try TemporaryFolder()
    let path = folder.path("private.sqlite")
    let engine = try MemoryEngine(path: path, configuration: hashingConfiguration(dimension: 64))
    try await engine.memories.remember("my bank PIN is not stored here")
    #expect(Self.permissions(path) == 0o600)
    // SQLite gives the WAL and shared-memory files the database file's mode.
    for suffix in ["-wal", "-shm"] where FileManager.default.fileExists(atPath: path + suffix) {
      #expect(Self.permissions(path + suffix) == 0o600, "\(suffix)")
    }
    let export = folder.path("export.jsonl")
    try await engine.transfer.export(to: export)
    #expect(Self.permissions(export) == 0o600)
    // Exporting over an existing world-readable file leaves it private as well.
    let existing = folder.path("existing.jsonl")
    try writeFile("old", to: existing)
    #expect(Self.permissions(existing) == 0o644)
    try await engine.transfer.export(to: existing)
    #expect(Self.permissions(existing) == 0o600)
    try engine.saveSnapshot()
    #expect(Self.permissions(try #require(engine.snapshotURL).path) == 0o600)
    await engine.close()
    ReliabilityLog.record(
      "hostile",
      [
        "case": "file modes under umask 022", "tried": 4, "handled": 4,
        "detail": "database, WAL/SHM, exports (new and overwritten) and index snapshot are 0600",
      ])
  }
}
