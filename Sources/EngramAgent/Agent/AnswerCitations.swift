import Engram
import Foundation

/// The memory ids a language model's answer cites (`[memory #12]`, `[message #40]`), checked
/// against the memories it was given: a citation of anything else is taken out, so an
/// answer never points at an id that was not retrieved for it.
enum AnswerCitations {
  /// `answer` without citations of items not among `memories`, and the items it cites.
  static func check(_ answer: String, memories: [SearchHit]) -> (text: String, cited: [SearchHit]) {
    var cited: [SearchHit] = []
    var text = ""
    var rest = Substring(answer)
    let citation = /\[(memory|message|summary) #(\d{1,18})\]/
    while let match = rest.firstMatch(of: citation) {
      let kind = ItemKind(rawValue: String(match.output.1))
      let id = Int64(match.output.2)
      let item = memories.first { $0.kind == kind && $0.id == id }
      text += rest[..<match.range.lowerBound]
      if let item {
        text += rest[match.range]
        if !cited.contains(item) { cited.append(item) }
      } else if text.last == " " {
        text.removeLast()
      }
      rest = rest[match.range.upperBound...]
    }
    text += rest
    return (text, cited)
  }
}
