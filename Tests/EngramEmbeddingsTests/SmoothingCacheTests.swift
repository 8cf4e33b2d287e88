import EngramTestSupport
import Foundation
import Testing

@testable import EngramEmbeddings

/// The smoothing's channel maxima kept beside the model (`BertModel.SmoothingCache`): read on
/// a later load with the same vectors, computed again when the file is damaged, stale or
/// cannot be written.
@Suite(.timeLimit(.minutes(10)), .watchdog) struct SmoothingCacheTests {
  static let texts = [
    "Maya signed up for the pottery class on Thursdays.", "提醒我明天下午三点给妈妈打电话。",
    "What did Priya say about her new job?", "",
  ]

  /// A new empty folder.
  static func folder() throws -> URL {
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("engram-smoothing-\(UUID())")
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    return folder
  }

  /// The installed model loaded at `.int8` keeping its maxima in `folder`.
  static func load(_ folder: URL?, file: URL? = nil) throws -> E5Embedder {
    let installed = try InstalledE5.embedder(precision: .int8).file
    return try E5Embedder(
      file: file ?? installed, modelID: nil, options: BertEmbedder.Options(threads: 2, precision: .int8),
      smoothingFolder: folder)
  }

  /// The vectors of `texts` with maxima computed at load, written nowhere.
  static let reference = Result { try load(nil).embedSynchronously(texts, as: .passage) }

  static func cacheFile(_ folder: URL, model: URL) -> URL {
    folder.appendingPathComponent(model.lastPathComponent + ".smoothing")
  }

  @Test("a second load reads the maxima the first wrote, and its vectors are bit-identical")
  func secondLoadReadsTheFile() throws {
    let folder = try Self.folder()
    defer { try? FileManager.default.removeItem(at: folder) }
    let first = try Self.load(folder)
    #expect(first.smoothingSource == .computed)
    let file = Self.cacheFile(folder, model: first.file)
    #expect(FileManager.default.fileExists(atPath: file.path))
    // Nothing else is left in the folder (the temporary file was renamed).
    #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path) == [file.lastPathComponent])
    let second = try Self.load(folder)
    #expect(second.smoothingSource == .cached)
    let reference = try Self.reference.get()
    #expect(first.embedSynchronously(Self.texts, as: .passage) == reference)
    #expect(second.embedSynchronously(Self.texts, as: .passage) == reference)
    #expect(second.model.layers.allSatisfy { $0.output.inputFactors != nil && $0.query.inputFactors != nil })
  }

  @Test(
    "a corrupt, truncated, lengthened or garbage maxima file is not used: computed again, the same vectors, the file rewritten"
  )
  func corruptFileIsRecomputed() throws {
    let folder = try Self.folder()
    defer { try? FileManager.default.removeItem(at: folder) }
    let first = try Self.load(folder)
    let file = Self.cacheFile(folder, model: first.file)
    let good = try Data(contentsOf: file)
    var flipped = good
    flipped[good.count / 2] ^= 0x40  // one float's bits: the checksum no longer matches
    var infinite = good
    // A channel maximum of +infinity with a matching checksum is still refused.
    let at = good.count - 8 - 4
    infinite.replaceSubrange(at..<(at + 4), with: [0x00, 0x00, 0x80, 0x7F])
    let body = infinite.prefix(infinite.count - 8)
    let checksum = body.withUnsafeBytes { BertModel.SmoothingCache.hash($0) }
    infinite.replaceSubrange(
      (infinite.count - 8)..., with: withUnsafeBytes(of: checksum.littleEndian) { Data($0) })
    let damaged: [(String, Data)] = [
      ("a flipped bit", flipped), ("truncated", good.prefix(good.count - 100)),
      ("lengthened", good + Data(count: 4)), ("garbage", Data(repeating: 0x5A, count: good.count)),
      ("empty", Data()), ("an infinite maximum", infinite),
    ]
    let reference = try Self.reference.get()
    for (name, data) in damaged {
      try data.write(to: file)
      let loaded = try Self.load(folder)
      #expect(loaded.smoothingSource == .computed, "\(name)")
      #expect(loaded.embedSynchronously(Self.texts, as: .passage) == reference, "\(name)")
      #expect(try Data(contentsOf: file) == good, "\(name): the file is rewritten")
    }
  }

  @Test("a model file changed since the maxima were written (its modification time) does not reuse them")
  func changedModelIsRecomputed() throws {
    let folder = try Self.folder()
    defer { try? FileManager.default.removeItem(at: folder) }
    let copy = folder.appendingPathComponent("e5-small-q4.bin")
    try FileManager.default.copyItem(at: try InstalledE5.embedder(precision: .int8).file, to: copy)
    #expect(try Self.load(folder, file: copy).smoothingSource == .computed)
    #expect(try Self.load(folder, file: copy).smoothingSource == .cached)
    try FileManager.default.setAttributes(
      [.modificationDate: Date(timeIntervalSinceNow: -3600)], ofItemAtPath: copy.path)
    let touched = try Self.load(folder, file: copy)
    #expect(touched.smoothingSource == .computed)
    #expect(touched.embedSynchronously(Self.texts, as: .passage) == (try Self.reference.get()))
  }

  @Test("a folder that cannot be written still loads: the maxima computed, nothing written")
  func unwritableFolderLoads() throws {
    let folder = try Self.folder()
    defer { try? FileManager.default.removeItem(at: folder) }
    // A path under a regular file: no one can create a file there, not even root (which a
    // read-only mode bit would not stop).
    let blocker = folder.appendingPathComponent("not-a-folder")
    try Data("x".utf8).write(to: blocker)
    let loaded = try Self.load(blocker)
    #expect(loaded.smoothingSource == .computedUnsaved)
    #expect(loaded.embedSynchronously(Self.texts, as: .passage) == (try Self.reference.get()))
    #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path) == ["not-a-folder"])
    #expect(try Self.load(blocker).smoothingSource == .computedUnsaved)
  }
}
