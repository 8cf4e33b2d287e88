// libFuzzer entry: the conversation importer (JSONL and LoCoMo JSON) must return a file or
// a typed ImportError for any bytes, never crash. Built by scripts/fuzz.sh.
import Engram
import Foundation

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzConversationFile(_ start: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
  let data = start.map { Data(bytes: $0, count: count) } ?? Data()
  if let file = try? ConversationFile.parse(data, path: "fuzz.jsonl", defaultSession: "fuzz") {
    // Invariants of a parsed file: at least one session, no empty session, no blank turn.
    precondition(!file.sessions.isEmpty)
    for session in file.sessions {
      precondition(!session.turns.isEmpty)
      for turn in session.turns {
        precondition(!turn.content.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty)
        precondition(ConversationFile.roles.contains(turn.role))
      }
    }
  }
  return 0
}
