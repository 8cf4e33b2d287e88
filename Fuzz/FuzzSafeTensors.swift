// libFuzzer entry: the safetensors header parser maps any file and returns its tensors or a
// typed EmbeddingError, never reading outside the file. Built by scripts/fuzz.sh.
import Foundation

@testable import EngramEmbeddings

let safetensorsPath = FileManager.default.temporaryDirectory
  .appendingPathComponent("engram-fuzz-\(getpid()).safetensors").path

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzSafeTensors(_ start: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
  let data = start.map { Data(bytes: $0, count: count) } ?? Data()
  guard FileManager.default.createFile(atPath: safetensorsPath, contents: data) else { return 0 }
  defer { unlink(safetensorsPath) }
  guard let tensors = try? SafeTensors(path: safetensorsPath) else { return 0 }
  for (name, entry) in tensors.entries {
    precondition(entry.range.lowerBound >= 8 && entry.range.upperBound <= count)
    if entry.dtype == "F32" {
      // Reading the first and last value must stay inside the mapping (ASan checks it).
      if let pointer = try? tensors.float32(name, shape: entry.shape), entry.range.count >= 4 {
        _ = pointer[0] + pointer[entry.range.count / 4 - 1]
      }
    }
  }
  return 0
}
