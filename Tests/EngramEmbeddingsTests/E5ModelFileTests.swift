import EngramEmbeddings
import EngramTestSupport
import Foundation
import Testing

/// Damaged copies of the installed `e5-small-q4.bin`: each is refused with a sentence, before
/// anything reads past the file or trusts a size.
@Suite("E5 model file validation", .timeLimit(.minutes(5)), .watchdog)
struct E5ModelFileTests {
  /// The installed model's bytes; a missing model fails the test, never skips it.
  static func original() throws -> Data {
    let locator = ModelLocator()
    guard FileManager.default.fileExists(atPath: locator.e5File.path) else {
      Issue.record("multilingual-e5-small is not installed at \(locator.e5File.path) — run `make setup`")
      throw EmbeddingError.e5ModelNotFound(path: locator.e5File.path)
    }
    return try Data(contentsOf: locator.e5File, options: .alwaysMapped)
  }

  /// The reason `bytes`, written to a file, is refused for; fails when the file loads.
  static func refusal(_ bytes: Data) throws -> String {
    let url = FileManager.default.temporaryDirectory.appendingPathComponent("engram-e5-\(UUID()).bin")
    try bytes.write(to: url)
    defer { try? FileManager.default.removeItem(at: url) }
    do {
      _ = try E5Embedder(file: url)
      Issue.record("a damaged model file loaded")
      return ""
    } catch .invalidE5Model(let path, let reason) {
      #expect(path == url.path)
      let description = EmbeddingError.invalidE5Model(path: path, reason: reason).description
      #expect(description.contains("make setup"))
      return reason
    } catch {
      Issue.record("unexpected error \(error)")
      return ""
    }
  }

  static func u32(_ data: Data, _ offset: Int) -> Int {
    (0..<4).reduce(0) { $0 | Int(data[data.startIndex + offset + $1]) << (8 * $1) }
  }

  static func u64(_ data: Data, _ offset: Int) -> Int {
    (0..<8).reduce(0) { $0 | Int(data[data.startIndex + offset + $1]) << (8 * $1) }
  }

  static func setU32(_ data: inout Data, _ offset: Int, _ value: UInt32) {
    for byte in 0..<4 {
      data[data.startIndex + offset + byte] = UInt8(truncatingIfNeeded: value >> (8 * byte))
    }
  }

  static func setU64(_ data: inout Data, _ offset: Int, _ value: UInt64) {
    for byte in 0..<8 {
      data[data.startIndex + offset + byte] = UInt8(truncatingIfNeeded: value >> (8 * byte))
    }
  }

  /// Byte offset of the tensor directory (its count), computed from the header's lengths.
  static func directoryOffset(_ data: Data) -> Int {
    let pieces = u32(data, 44)
    let blob = u64(data, 64)
    let normalization = 72 + 4 * (pieces + 1) + 4 * pieces + blob
    return normalization + 8 + u32(data, normalization + 4)
  }

  @Test("a missing file is a typed error naming make setup")
  func missing() {
    let path = "/nonexistent/engram/e5-small-q4.bin"
    #expect(throws: EmbeddingError.e5ModelNotFound(path: path)) {
      _ = try E5Embedder(file: URL(fileURLWithPath: path))
    }
    #expect(EmbeddingError.e5ModelNotFound(path: path).description.contains("make setup"))
    let locator = ModelLocator(environment: ["ENGRAM_E5_MODEL": path])
    #expect(throws: EmbeddingError.e5ModelNotFound(path: path)) { _ = try E5Embedder(locator: locator) }
  }

  @Test("the locator reads ENGRAM_E5_MODEL, then the cache folder")
  func locator() {
    #expect(
      ModelLocator(environment: ["ENGRAM_E5_MODEL": "/m/e5.bin", "HOME": "/h"]).e5File.path == "/m/e5.bin")
    #expect(
      ModelLocator(environment: ["XDG_CACHE_HOME": "/x"]).e5File.path
        == "/x/engram/models/multilingual-e5-small/e5-small-q4.bin")
    #expect(
      ModelLocator(environment: ["HOME": "/h"]).e5File.path
        == "/h/.cache/engram/models/multilingual-e5-small/e5-small-q4.bin")
  }

  @Test("an empty file, a wrong magic and an unknown version are refused")
  func header() throws {
    let data = try Self.original()
    #expect(try Self.refusal(Data()).contains("empty"))
    var magic = Data(data.prefix(4096))
    magic[0] = UInt8(ascii: "X")
    #expect(try Self.refusal(magic).contains("magic"))
    var version = Data(data.prefix(4096))
    Self.setU32(&version, 4, 2)
    #expect(try Self.refusal(version).contains("version"))
    var heads = Data(data.prefix(4096))
    Self.setU32(&heads, 16, 0)
    #expect(try Self.refusal(heads).contains("head count"))
    var block = Data(data.prefix(4096))
    Self.setU32(&block, 40, 16)
    #expect(try Self.refusal(block).contains("block length"))
  }

  @Test(
    "a file cut anywhere is refused as truncated",
    arguments: [10, 60, 100_000, 4_000_000, 4_638_300, 60_000_000])
  func truncated(length: Int) throws {
    let data = try Self.original()
    let reason = try Self.refusal(Data(data.prefix(length)))
    #expect(reason.contains("truncated") || reason.contains("past the end"), "\(reason)")
  }

  @Test("damaged tokenizer tables are refused")
  func tokenizer() throws {
    let data = try Self.original()
    let pieces = Self.u32(data, 44)
    var special = Data(data.prefix(4_700_000))
    Self.setU32(&special, 60, UInt32(pieces))  // <unk> past the pieces
    #expect(try Self.refusal(special).contains("<unk>"))
    var backwards = Data(data.prefix(4_700_000))
    Self.setU32(&backwards, 72 + 4 * 100, 0)  // piece 100 starts at 0 again
    #expect(try Self.refusal(backwards).contains("piece"))
    var blob = Data(data.prefix(4_700_000))
    Self.setU64(&blob, 64, UInt64(1) << 40)
    #expect(try Self.refusal(blob).contains("past the end"))
  }

  @Test("a tensor whose offset or size does not fit is refused")
  func directory() throws {
    let data = try Self.original()
    let directory = Self.directoryOffset(data)
    // The first entry: u16 name length, the name, u8 type, u32 count, u64 offset, u64 length.
    let nameLength = Self.u32(data, directory + 4) & 0xFFFF
    let entry = directory + 4 + 2 + nameLength
    var offset = data
    Self.setU64(&offset, entry + 5, UInt64(data.count - 100))
    #expect(try Self.refusal(offset).contains("past the end"))
    var length = data
    Self.setU64(&length, entry + 13, 12)
    #expect(try Self.refusal(length).contains("bytes where"))
    var kind = data
    kind[kind.startIndex + entry] = 7
    #expect(try Self.refusal(kind).contains("unknown type"))
    var name = data
    name[name.startIndex + directory + 6] = UInt8(ascii: "x")  // emb.word → xmb.word
    #expect(try Self.refusal(name).contains("lacks tensor emb.word"))
  }
}
