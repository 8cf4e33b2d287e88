import EngramTestSupport
import Foundation
import Testing

@testable import EngramVectors

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// Issue 17, finding 1: temporary files get unpredictable names, are created exclusively
/// with mode 0600, and never follow a planted symlink.
@Suite(.timeLimit(.minutes(5)), .watchdog) struct HostileTemporaryFileTests {
  static func folder() throws -> URL {
    let url = FileManager.default.temporaryDirectory.appendingPathComponent(
      "engram-tmpfile-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    return url
  }

  @Test func namesAreUnpredictableAndModeIsPrivateWhateverTheUmask() throws {
    let folder = try Self.folder()
    defer { try? FileManager.default.removeItem(at: folder) }
    let destination = folder.appendingPathComponent("out").path
    let previous = umask(0)
    defer { umask(previous) }
    let first = try SecureTemporaryFile(beside: destination)
    let second = try SecureTemporaryFile(beside: destination)
    #expect(first.path != second.path)
    #expect(first.path.hasPrefix(destination + ".tmp-") && !first.path.hasSuffix("-\(getpid())"))
    for file in [first, second] {
      var info = stat()
      #expect(fstat(file.descriptor, &info) == 0)
      #expect(info.st_mode & 0o777 == 0o600)
    }
    second.discard()
    #expect(!FileManager.default.fileExists(atPath: second.path))
    let bytes = Array("hello".utf8)
    try first.write(bytes, count: bytes.count)
    try first.commit()
    #expect(try String(contentsOfFile: destination, encoding: .utf8) == "hello")
    #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path) == ["out"])
  }

  @Test func aSymlinkAtTheDestinationIsReplacedNotFollowed() throws {
    let folder = try Self.folder()
    defer { try? FileManager.default.removeItem(at: folder) }
    let victim = folder.appendingPathComponent("victim").path
    try Data("precious".utf8).write(to: URL(fileURLWithPath: victim))
    let destination = folder.appendingPathComponent("snapshot").path
    #expect(symlink(victim, destination) == 0)
    let file = try SecureTemporaryFile(beside: destination)
    let bytes = Array("new".utf8)
    try file.write(bytes, count: bytes.count)
    try file.commit()
    #expect(try String(contentsOfFile: victim, encoding: .utf8) == "precious")
    var info = stat()
    #expect(lstat(destination, &info) == 0)
    #expect(info.st_mode & S_IFMT == S_IFREG)
  }

  @Test func aReleasedUncommittedFileIsRemoved() throws {
    let folder = try Self.folder()
    defer { try? FileManager.default.removeItem(at: folder) }
    var path = ""
    do {
      let file = try SecureTemporaryFile(beside: folder.appendingPathComponent("x").path)
      path = file.path
      #expect(FileManager.default.fileExists(atPath: path))
    }
    #expect(!FileManager.default.fileExists(atPath: path))
  }
}
