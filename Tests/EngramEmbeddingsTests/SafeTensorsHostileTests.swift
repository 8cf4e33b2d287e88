import EngramTestSupport
import Foundation
import Testing

@testable import EngramEmbeddings

/// Hostile safetensors headers (found by reading the parser with the fuzz target in mind):
/// offsets and shapes whose arithmetic overflows must be typed errors, never traps.
@Suite(.timeLimit(.minutes(5)), .watchdog) struct SafeTensorsHostileTests {
  static func file(header: String, payload: Int) throws -> String {
    let bytes = Data(header.utf8)
    var data = Data()
    withUnsafeBytes(of: UInt64(bytes.count).littleEndian) { data.append(contentsOf: $0) }
    data.append(bytes)
    data.append(Data(repeating: 0, count: payload))
    let path = FileManager.default.temporaryDirectory
      .appendingPathComponent("engram-hostile-\(UUID().uuidString).safetensors").path
    try data.write(to: URL(fileURLWithPath: path))
    return path
  }

  @Test(arguments: [
    // End offset near Int.max: `dataStart + end` overflowed.
    #"{"w":{"dtype":"F32","shape":[1],"data_offsets":[0,9223372036854775807]}}"#,
    // Shape whose element count times the byte width overflows.
    #"{"w":{"dtype":"F32","shape":[4611686018427387904],"data_offsets":[0,0]}}"#,
    #"{"w":{"dtype":"F32","shape":[4294967296,4294967296],"data_offsets":[0,16]}}"#,
    // A product that wraps to exactly the byte count must not pass either.
    #"{"w":{"dtype":"U8","shape":[4294967296,4294967296,1],"data_offsets":[0,0]}}"#,
  ])
  func overflowingHeadersAreTypedErrors(_ header: String) throws {
    let path = try Self.file(header: header, payload: 16)
    defer { try? FileManager.default.removeItem(atPath: path) }
    #expect {
      _ = try SafeTensors(path: path)
    } throws: { error in
      guard case .invalidSafetensors = error as? EmbeddingError else { return false }
      return true
    }
  }
}
