// libFuzzer entry: the date-expression parser finds a date or nothing in any text, and the
// range it reports lies inside the text. Built by scripts/fuzz.sh.
import EngramAgent
import Foundation

let dateParser = DateExpressionParser(
  clock: AgentClock.fixed(Date(timeIntervalSince1970: 1_700_000_000), timeZone: TimeZone(identifier: "UTC")!))

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzDateExpression(_ start: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
  let text = String(decoding: UnsafeBufferPointer(start: start, count: count), as: UTF8.self)
  if let match = dateParser.parse(text) {
    precondition(match.range.lowerBound >= text.startIndex && match.range.upperBound <= text.endIndex)
    precondition(match.date.timeIntervalSince1970.isFinite)
  }
  return 0
}
