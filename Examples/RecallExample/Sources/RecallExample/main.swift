import Engram
import Foundation

// Remembers two facts in a new memory and recalls one, with the hashing embedder (no model
// download needed). Usage: RecallExample [DATABASE]
let path =
  CommandLine.arguments.count > 1
  ? CommandLine.arguments[1]
  : FileManager.default.temporaryDirectory.appendingPathComponent("recall-example-\(getpid()).sqlite").path
do {
  let engine = try MemoryEngine(
    path: path, configuration: EngramConfiguration(embedder: try HashingEmbedder()))
  defer { engine.close() }
  try await engine.memories.remember("The garage code is 4512", kind: .fact)
  try await engine.memories.remember("Alice prefers tea over coffee", kind: .preference)
  let hits = try await engine.search("what is the garage code", k: 1)
  guard let best = hits.first else {
    FileHandle.standardError.write(Data("nothing recalled\n".utf8))
    exit(1)
  }
  print(best.text)
} catch {
  FileHandle.standardError.write(Data("RecallExample: \(error)\n".utf8))
  exit(1)
}
