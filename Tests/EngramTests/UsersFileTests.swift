import EngramTestSupport
import Foundation
import Testing

@testable import Engram

/// The users file: parse, add, remove, save and load, and a token selecting its user.
@Suite(.timeLimit(.minutes(5)), .watchdog) struct UsersFileTests {
  @Test(arguments: [
    ("", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"),
    ("abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"),
    (
      "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
      "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"
    ),
  ])
  func sha256MatchesTheStandardVectors(message: String, digest: String) {
    #expect(UsersFile.hex(SHA256.digest(Array(message.utf8))) == digest)
  }

  @Test func aTokenSelectsItsUserAndNoOther() throws {
    var file = UsersFile()
    let ann = try file.add("ann")
    let bob = try file.add("bob@example.org")
    #expect(ann.count == 64 && bob.count == 64 && ann != bob)
    #expect(file.user(forToken: ann) == "ann")
    #expect(file.user(forToken: bob) == "bob@example.org")
    #expect(file.user(forToken: ann + "0") == nil)
    #expect(file.user(forToken: String(ann.dropLast())) == nil)
    #expect(file.user(forToken: "") == nil)
    #expect(file.user(forToken: file.entries[0].tokenHash.map { String($0) }.joined()) == nil)
  }

  @Test func addRefusesAnInvalidOrExistingUser() throws {
    var file = UsersFile()
    _ = try file.add("ann")
    #expect(throws: UsersFileError.duplicateUser("ann")) {
      var copy = file
      _ = try copy.add("ann")
    }
    #expect(throws: UsersFileError.invalidUser("../etc")) {
      var copy = file
      _ = try copy.add("../etc")
    }
    #expect(throws: UsersFileError.invalidUser("")) {
      var copy = file
      _ = try copy.add("")
    }
  }

  @Test func aSavedFileLoadsBackWithoutTheTokensAndWithMode0600() throws {
    let scratch = try ScratchFolder()
    let path = scratch.path("users")
    var file = UsersFile()
    let ann = try file.add("ann")
    let bob = try file.add("bob")
    try file.save(path: path)
    let text = try String(contentsOfFile: path, encoding: .utf8)
    #expect(!text.contains(ann) && !text.contains(bob))
    let mode = try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int
    #expect(mode == 0o600)
    var loaded = try UsersFile.load(path: path)
    #expect(loaded == file)
    #expect(loaded.user(forToken: bob) == "bob")
    let removed = loaded.remove("bob")
    let removedAgain = loaded.remove("bob")
    #expect(removed && !removedAgain)
    try loaded.save(path: path)
    let again = try UsersFile.load(path: path)
    #expect(again.users == ["ann"])
    #expect(again.user(forToken: bob) == nil)
    #expect(again.user(forToken: ann) == "ann")
  }

  @Test func aMissingFileIsEmptyOnlyWhenAsked() throws {
    let scratch = try ScratchFolder()
    #expect(try UsersFile.load(path: scratch.path("none"), missingIsEmpty: true).users.isEmpty)
    #expect(throws: UsersFileError.unreadable(path: scratch.path("none"))) {
      _ = try UsersFile.load(path: scratch.path("none"))
    }
  }

  @Test(arguments: [
    ("ann", 1, "expected 'USER SHA256-OF-TOKEN'"),
    ("# comment\n\nann zz", 3, "the token hash is not 64 hex digits"),
    (".ann " + String(repeating: "a", count: 64), 1, "'.ann' is not a valid user id"),
    (
      "ann " + String(repeating: "a", count: 64) + "\nann " + String(repeating: "b", count: 64), 2,
      "user 'ann' is listed twice"
    ),
  ])
  func aMalformedLineIsNamed(text: String, line: Int, reason: String) {
    #expect(throws: UsersFileError.invalidLine(path: "u", line: line, reason: reason)) {
      _ = try UsersFile(parsing: text, path: "u")
    }
  }
}
