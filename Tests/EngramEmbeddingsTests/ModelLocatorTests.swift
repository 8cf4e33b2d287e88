import EngramEmbeddings
import EngramTestSupport
import Foundation
import Testing

@Suite("ModelLocator", .timeLimit(.minutes(5)), .watchdog)
struct ModelLocatorTests {
  @Test("ENGRAM_MODEL_DIR wins, then XDG_CACHE_HOME, then ~/.cache")
  func order() {
    let explicit = ModelLocator(environment: ["ENGRAM_MODEL_DIR": "/m", "XDG_CACHE_HOME": "/x", "HOME": "/h"])
    #expect(explicit.directory.path == "/m")
    let xdg = ModelLocator(environment: ["XDG_CACHE_HOME": "/x", "HOME": "/h"])
    #expect(xdg.directory.path == "/x/engram/models/all-MiniLM-L6-v2")
    let home = ModelLocator(environment: ["HOME": "/h"])
    #expect(home.directory.path == "/h/.cache/engram/models/all-MiniLM-L6-v2")
  }

  @Test("a missing model is a typed error whose description names the fix")
  func missing() throws {
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("engram-no-model-\(UUID())")
    let locator = ModelLocator(environment: ["ENGRAM_MODEL_DIR": folder.path])
    #expect(throws: EmbeddingError.modelNotFound(directory: folder.path, missingFile: "(the folder itself)"))
    {
      _ = try locator.locate()
    }
    do {
      _ = try BertEmbedder(locator: locator)
      Issue.record("loading a missing model succeeded")
    } catch {
      #expect(error.description.contains("make test"))
      #expect(error.description.contains("ENGRAM_MODEL_DIR"))
    }
  }

  @Test("a folder missing one file names that file")
  func missingFile() throws {
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("engram-partial-\(UUID())")
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: folder) }
    try Data("{}".utf8).write(to: folder.appendingPathComponent("config.json"))
    #expect(throws: EmbeddingError.modelNotFound(directory: folder.path, missingFile: "vocab.txt")) {
      try ModelLocator.validate(folder)
    }
  }
}
