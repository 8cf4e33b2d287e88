// libFuzzer entry: the WordPiece tokenizer, with a small built-in vocabulary, returns ids
// within the vocabulary and within the sequence limit for any text. Built by scripts/fuzz.sh.
import EngramEmbeddings
import Foundation

let wordPiece: WordPieceTokenizer = {
  let vocabulary =
    [
      "[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "the", "a", "climb", "##ing", "##s", "alice", "on", "day",
      "##day", "sat", "##ur", "我", "周", "末", "去", ",", ".", "!", "é", "e", "##e", "cafe", "na", "##ive",
    ]
  return try! WordPieceTokenizer(vocabulary: vocabulary, lowercases: true, maxSequenceLength: 32)
}()

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzWordPiece(_ start: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
  let text = String(decoding: UnsafeBufferPointer(start: start, count: count), as: UTF8.self)
  let ids = wordPiece.encode(text)
  precondition(ids.count >= 2 && ids.count <= wordPiece.maxSequenceLength)
  precondition(ids.first == wordPiece.classID && ids.last == wordPiece.separatorID)
  for id in ids { precondition(id >= 0 && Int(id) < wordPiece.vocabularySize) }
  _ = wordPiece.tokenize(text)
  return 0
}
