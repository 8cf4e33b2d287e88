import EngramTestSupport
import Foundation
import Testing

@testable import EngramStore

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// A read-only `Database` creates no file and writes no byte, and still sees every commit
/// (issue 15): writers keep the `-wal` and `-shm` files, readers open them read-only.
@Suite(.timeLimit(.minutes(5)), .watchdog) struct DatabaseReadOnlyTests {
  /// One file of a folder: its bytes, size and modification time (nanoseconds).
  struct FileState: Equatable {
    var bytes: Data
    var size: Int
    var modified: Int
  }

  /// Every file of `folder`, by name.
  static func census(_ folder: String) throws -> [String: FileState] {
    var files: [String: FileState] = [:]
    for name in try FileManager.default.contentsOfDirectory(atPath: folder) {
      let path = folder + "/" + name
      var info = stat()
      #expect(stat(path, &info) == 0)
      files[name] = FileState(
        bytes: try Data(contentsOf: URL(fileURLWithPath: path)), size: Int(info.st_size),
        modified: Int(info.st_mtim.tv_sec) * 1_000_000_000 + Int(info.st_mtim.tv_nsec))
    }
    return files
  }

  static func insert(_ database: Database, _ count: Int, tag: String) throws {
    try database.write { connection in
      for index in 0..<count {
        _ = try connection.insert(Message(role: .user, content: "\(tag) \(index)", createdAt: t0))
      }
    }
  }

  static var readOnly: Database.Configuration {
    var configuration = Database.Configuration()
    configuration.readOnly = true
    return configuration
  }

  @Test func aWriterKeepsAnEmptyLogAndTheWalIndexWhenItCloses() throws {
    let directory = try TemporaryDirectory()
    let path = directory.file("db.sqlite")
    let writer = try Database(path: path)
    try Self.insert(writer, 30, tag: "kept")
    writer.close()
    #expect(FileManager.default.fileExists(atPath: path + "-shm"))
    let log = try FileManager.default.attributesOfItem(atPath: path + "-wal")[.size] as? Int
    #expect(log == 0)
  }

  @Test func aReadOnlyOpenCreatesNoFileAndChangesNoByteWhileOpenAndAfter() throws {
    let directory = try TemporaryDirectory()
    let path = directory.file("db.sqlite")
    let writer = try Database(path: path)
    try Self.insert(writer, 50, tag: "before")
    writer.close()
    let before = try Self.census(directory.path)
    let reader = try Database(path: path, configuration: Self.readOnly)
    #expect(try reader.read { try $0.count(Message.self) } == 50)
    #expect(try reader.read { try $0.count(Message.self) } == 50)
    let whileOpen = try Self.census(directory.path)
    #expect(Set(whileOpen.keys) == Set(before.keys), "open: \(whileOpen.keys.sorted())")
    for (name, state) in before { #expect(whileOpen[name] == state, "open: \(name) changed") }
    reader.close()
    let after = try Self.census(directory.path)
    #expect(Set(after.keys) == Set(before.keys), "closed: \(after.keys.sorted())")
    for (name, state) in before { #expect(after[name] == state, "closed: \(name) changed") }
  }

  @Test func aReaderOpenedAloneSeesAWriterThatComesLaterAndEveryCommitAfter() throws {
    let directory = try TemporaryDirectory()
    let path = directory.file("db.sqlite")
    let first = try Database(path: path)
    try Self.insert(first, 10, tag: "one")
    first.close()
    let reader = try Database(path: path, configuration: Self.readOnly)
    #expect(try reader.read { try $0.count(Message.self) } == 10)
    let writer = try Database(path: path)
    try Self.insert(writer, 5, tag: "two")
    #expect(try reader.read { try $0.count(Message.self) } == 15)
    try Self.insert(writer, 7, tag: "three")
    #expect(try reader.read { try $0.count(Message.self) } == 22)
    // A reader opened while the writer is live maps its wal-index.
    let second = try Database(path: path, configuration: Self.readOnly)
    #expect(try second.read { try $0.count(Message.self) } == 22)
    try Self.insert(writer, 3, tag: "four")
    #expect(try second.read { try $0.count(Message.self) } == 25)
    writer.close()
    #expect(try reader.read { try $0.count(Message.self) } == 25)
    second.close()
    reader.close()
    let last = try Database(path: path, configuration: Self.readOnly)
    #expect(try last.read { try $0.count(Message.self) } == 25)
  }

  @Test func aReaderSeesCommitsAWriterThatDiedLeftInTheLog() throws {
    let directory = try TemporaryDirectory()
    let path = directory.file("db.sqlite")
    let writer = try Database(path: path)
    try Self.insert(writer, 40, tag: "logged")
    // The files as a writer killed now leaves them: committed pages still in the log.
    let copy = try TemporaryDirectory()
    for suffix in ["", "-wal", "-shm"] {
      try FileManager.default.copyItem(atPath: path + suffix, toPath: copy.file("db.sqlite" + suffix))
    }
    writer.close()
    let logSize = try FileManager.default.attributesOfItem(atPath: copy.file("db.sqlite-wal"))[.size] as? Int
    #expect((logSize ?? 0) > 0)
    let before = try Self.census(copy.path)
    let reader = try Database(path: copy.file("db.sqlite"), configuration: Self.readOnly)
    #expect(try reader.read { try $0.count(Message.self) } == 40)
    reader.close()
    #expect(try Self.census(copy.path) == before)
  }
}
