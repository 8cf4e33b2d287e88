import Foundation

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// The users a multi-user server knows (`engram users`, `--users FILE`): one line per user,
/// `ID HASH`, where HASH is the SHA-256 of the user's bearer token in hex. The token itself
/// is shown once, when the user is added, and never stored.
///
/// A request's token selects its user through ``user(forToken:)``, which compares the
/// token's hash with every stored hash in time independent of where they differ; nothing a
/// request says besides its token chooses the user.
///
/// Lines starting with `#` and blank lines are comments.
public struct UsersFile: Sendable, Hashable {
  /// One user: the id and the SHA-256 of their token.
  public struct Entry: Sendable, Hashable {
    /// The user id (a valid `StoreUser` id).
    public var user: String
    /// The SHA-256 of the user's token (32 bytes).
    public var tokenHash: [UInt8]
  }

  /// The users, in file order.
  public private(set) var entries: [Entry] = []

  /// The bytes of entropy of a new token (256 bits).
  public static let tokenBytes = 32

  /// An empty users file.
  public init() {}

  /// Parses the text of a users file.
  /// - Throws: ``UsersFileError/invalidLine(path:line:reason:)`` for a malformed line, a
  ///   user id `StoreUser` refuses, a hash that is not 64 hex digits, or a user listed twice.
  public init(parsing text: String, path: String = "users") throws(UsersFileError) {
    var seen = Set<String>()
    for (number, raw) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
      let line = raw.trimmingCharacters(in: .whitespaces)
      if line.isEmpty || line.hasPrefix("#") { continue }
      let fields = line.split(whereSeparator: { $0 == " " || $0 == "\t" })
      guard fields.count == 2 else {
        throw .invalidLine(path: path, line: number + 1, reason: "expected 'USER SHA256-OF-TOKEN'")
      }
      let user = String(fields[0])
      guard (try? StoreUser.validated(user)) != nil else {
        throw .invalidLine(path: path, line: number + 1, reason: "'\(user)' is not a valid user id")
      }
      guard let hash = Self.bytes(hex: fields[1]), hash.count == 32 else {
        throw .invalidLine(path: path, line: number + 1, reason: "the token hash is not 64 hex digits")
      }
      guard seen.insert(user).inserted else {
        throw .invalidLine(path: path, line: number + 1, reason: "user '\(user)' is listed twice")
      }
      entries.append(Entry(user: user, tokenHash: hash))
    }
  }

  /// Reads the users file at `path`; a missing file is an empty one when `missingIsEmpty`.
  /// - Throws: ``UsersFileError``.
  public static func load(path: String, missingIsEmpty: Bool = false) throws(UsersFileError) -> UsersFile {
    let data: Data
    do {
      data = try Data(contentsOf: URL(fileURLWithPath: path))
    } catch {
      if missingIsEmpty, !FileManager.default.fileExists(atPath: path) { return UsersFile() }
      throw .unreadable(path: path)
    }
    return try UsersFile(parsing: String(decoding: data, as: UTF8.self), path: path)
  }

  /// Writes the file to `path` (mode 0600, replaced atomically).
  /// - Throws: ``UsersFileError/unwritable(path:)``.
  public func save(path: String) throws(UsersFileError) {
    var text = "# engram users: USER SHA256-OF-TOKEN (engram users add|list|remove)\n"
    for entry in entries { text += "\(entry.user) \(Self.hex(entry.tokenHash))\n" }
    let temporary = path + ".tmp-\(getpid())"
    let descriptor = open(temporary, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
    guard descriptor >= 0 else { throw .unwritable(path: path) }
    let bytes = Array(text.utf8)
    let written = bytes.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
    let synced = fsync(descriptor) == 0
    close(descriptor)
    guard written == bytes.count, synced, rename(temporary, path) == 0 else {
      unlink(temporary)
      throw .unwritable(path: path)
    }
  }

  /// The user ids, in file order.
  public var users: [String] { entries.map(\.user) }

  /// Adds `user` with a new random token and returns the token (to show once).
  /// - Throws: ``UsersFileError/invalidUser(_:)``, ``UsersFileError/duplicateUser(_:)``.
  public mutating func add(_ user: String) throws(UsersFileError) -> String {
    guard (try? StoreUser.validated(user)) != nil else { throw .invalidUser(user) }
    guard !entries.contains(where: { $0.user == user }) else { throw .duplicateUser(user) }
    let token = Self.newToken()
    entries.append(Entry(user: user, tokenHash: Self.hash(token: token)))
    return token
  }

  /// Adds `user` with the token `token` (a caller that draws its own tokens, such as a
  /// benchmark); prefer ``add(_:)``.
  /// - Throws: as ``add(_:)``.
  public mutating func add(_ user: String, token: String) throws(UsersFileError) {
    guard (try? StoreUser.validated(user)) != nil else { throw .invalidUser(user) }
    guard !entries.contains(where: { $0.user == user }) else { throw .duplicateUser(user) }
    entries.append(Entry(user: user, tokenHash: Self.hash(token: token)))
  }

  /// Removes `user`; returns whether they were listed.
  @discardableResult
  public mutating func remove(_ user: String) -> Bool {
    let before = entries.count
    entries.removeAll { $0.user == user }
    return entries.count != before
  }

  /// The user whose token is `token`, or nil.
  ///
  /// Hashes the token and compares the hash with every stored one, reading every byte of
  /// each whatever matched: the time taken says nothing about which user (if any) is close.
  /// - Complexity: O(users).
  public func user(forToken token: String) -> String? {
    let hash = Self.hash(token: token)
    var found: Int = -1
    for (index, entry) in entries.enumerated() {
      var difference: UInt8 = 0
      for byte in 0..<32 { difference |= hash[byte] ^ entry.tokenHash[byte] }
      // Branch-free selection: `found` takes `index` when the difference is zero.
      let match = Int(difference == 0 ? 1 : 0)
      found = match * index + (1 - match) * found
    }
    return found >= 0 ? entries[found].user : nil
  }

  /// A new token: 256 random bits from the system's generator, as 64 hex digits.
  public static func newToken() -> String {
    var generator = SystemRandomNumberGenerator()
    return hex((0..<tokenBytes).map { _ in UInt8.random(in: 0...255, using: &generator) })
  }

  /// The SHA-256 of `token`'s UTF-8 bytes.
  public static func hash(token: String) -> [UInt8] {
    SHA256.digest(Array(token.utf8))
  }

  static func hex(_ bytes: [UInt8]) -> String {
    let digits = Array("0123456789abcdef")
    return String(bytes.flatMap { [digits[Int($0 >> 4)], digits[Int($0 & 15)]] })
  }

  static func bytes(hex: Substring) -> [UInt8]? {
    let scalars = Array(hex.utf8)
    guard scalars.count % 2 == 0 else { return nil }
    func value(_ c: UInt8) -> UInt8? {
      switch c {
      case 0x30...0x39: return c - 0x30
      case 0x61...0x66: return c - 0x61 + 10
      case 0x41...0x46: return c - 0x41 + 10
      default: return nil
      }
    }
    var result: [UInt8] = []
    result.reserveCapacity(scalars.count / 2)
    for index in stride(from: 0, to: scalars.count, by: 2) {
      guard let high = value(scalars[index]), let low = value(scalars[index + 1]) else { return nil }
      result.append(high << 4 | low)
    }
    return result
  }
}

/// What is wrong with a users file or a change to it.
public enum UsersFileError: Error, Sendable, Hashable, CustomStringConvertible {
  /// A line that is not `USER HASH`, with the reason.
  case invalidLine(path: String, line: Int, reason: String)
  /// The file could not be read.
  case unreadable(path: String)
  /// The file could not be written.
  case unwritable(path: String)
  /// A user id `StoreUser` refuses.
  case invalidUser(String)
  /// The user is already listed.
  case duplicateUser(String)

  /// One line for a person.
  public var description: String {
    switch self {
    case .invalidLine(let path, let line, let reason): return "\(path):\(line): \(reason)"
    case .unreadable(let path): return "\(path): cannot read the users file"
    case .unwritable(let path): return "\(path): cannot write the users file"
    case .invalidUser(let user):
      return "invalid user '\(user)': use 1-128 ASCII letters, digits, '.', '_', '-' or '@' "
        + "(not starting with '.' or '-')"
    case .duplicateUser(let user):
      return "user '\(user)' already exists; remove it first to issue a new token"
    }
  }
}
