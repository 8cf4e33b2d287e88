import EngramTestSupport
import Foundation
import Testing

@testable import EngramCore

@Suite(.timeLimit(.minutes(5)), .watchdog) struct JSONValueTests {
  @Test(arguments: [600, 100_000])
  func textNestedTooDeepIsSaidToBe(depth: Int) {
    let text = String(repeating: "[", count: depth) + String(repeating: "]", count: depth)
    let error = #expect(throws: JSONValue.ParseError.self) { _ = try JSONValue.parse(text) }
    #expect(error?.isNestedTooDeep == true)
    #expect(error?.reason.contains("nested more than 512 levels") == true)
  }

  @Test func bracketsInStringsAndShallowErrorsAreNotCalledDeep() {
    let text = #"{"a": ""# + String(repeating: "[", count: 1000) + #"", "b": }"#
    let error = #expect(throws: JSONValue.ParseError.self) { _ = try JSONValue.parse(text) }
    #expect(error?.isNestedTooDeep == false)
    let fine = String(repeating: "[", count: 500) + String(repeating: "]", count: 500)
    #expect((try? JSONValue.parse(fine)) != nil)
  }

  @Test func parsesEveryKindKeepingIntegersApart() throws {
    let value = try JSONValue(
      parsing: Data(#"{"a":null,"b":true,"c":3,"d":2.5,"e":"x","f":[1,"y"],"g":{}}"#.utf8))
    #expect(value["a"] == .null)
    #expect(value["b"] == .bool(true))
    #expect(value["c"] == .int(3))
    #expect(value["d"] == .double(2.5))
    #expect(value["e"] == .string("x"))
    #expect(value["f"] == .array([.int(1), .string("y")]))
    #expect(value["g"] == .object([:]))
  }

  @Test func roundTripsWithSortedKeysAndEscapes() throws {
    let value: JSONValue = ["z": 1, "a": ["line\nbreak \"quoted\" / \u{1}"], "m": -0.5]
    #expect(value.jsonText == #"{"a":["line\nbreak \"quoted\" / \u0001"],"m":-0.5,"z":1}"#)
    #expect(try JSONValue(parsing: value.serialized()) == value)
  }

  @Test func helpersConvertOnlyWhereExact() {
    #expect(JSONValue.double(4).intValue == 4)
    #expect(JSONValue.double(4.5).intValue == nil)
    #expect(JSONValue.double(1e300).intValue == nil)
    #expect(JSONValue.int(2).doubleValue == 2)
    #expect(JSONValue.string("2").intValue == nil)
    #expect(JSONValue.bool(true).intValue == nil)
    #expect(JSONValue.array([1])[3] == nil)
    #expect(JSONValue.string("x")["key"] == nil)
  }

  @Test func nonFiniteNumbersFailToSerializeButRenderAsNull() {
    let value: JSONValue = ["x": .double(.nan)]
    #expect(throws: (any Error).self) { try value.serialized() }
    #expect(value.jsonText == #"{"x":null}"#)
  }

  @Test(arguments: ["", "{", "[1 2]", "{\"a\" 1}", "nul"])
  func rejectsMalformedText(text: String) {
    #expect(throws: (any Error).self) { try JSONValue(parsing: Data(text.utf8)) }
  }
}

@Suite(.timeLimit(.minutes(5)), .watchdog) struct JSONValueFastParserTests {
  /// The fast path's answer, or nil when it declines.
  func fast(_ text: String) -> JSONValue? {
    var text = text
    return text.withUTF8 { JSONValue.FastParser.parse($0) }
  }

  @Test(arguments: [
    #"{"dia_id":"D1:3","img_url":["https://x/y.jpg"],"n":-12,"ok":true,"none":null}"#,
    #"  [ 1 , [] , {} , "a\"b\\c\/d\b\f\n\r\t" , false ]  "#, #""caf\u00e9 \ud83d\ude00 \u4e2d""#, "0", "-7",
    "9223372036854775807", "-9223372036854775808", #""é 中 🙂""#, #"{"a":{"b":{"c":[null]}}}"#,
  ])
  func takesTheCommonShapeExactlyAsJSONDecoderDoes(text: String) throws {
    let value = try #require(fast(text))
    #expect(value == (try JSONValue.decodeWithJSONDecoder(Data(text.utf8))))
    #expect(try JSONValue.parse(text) == value)
  }

  @Test(arguments: [
    "2.5", "1e3", "-0", "01", "9223372036854775808", "-9223372036854775809", #"{"a":1,"a":2}"#,
    #""\ud800""#, #""\udc00x""#, "\"tab\there\"", "", " ", "{", "[1 2]", "{\"a\" 1}", "nul", "[1,]", "{,}",
    "1 2", "\u{FEFF}{}", #""\x""#, String(repeating: "[", count: 100) + String(repeating: "]", count: 100),
  ])
  func declinesWhatItCannotDecodeExactlyAndParseStillAgrees(text: String) {
    #expect(fast(text) == nil)
    let reference = try? JSONValue.decodeWithJSONDecoder(Data(text.utf8))
    #expect((try? JSONValue.parse(text)) == reference)
    #expect((try? JSONValue(parsing: Data(text.utf8))) == reference)
  }

  @Test func declinesInvalidUTF8() {
    let bytes: [UInt8] = [0x22, 0xFF, 0xFE, 0x22]
    let declined = bytes.withUnsafeBufferPointer { JSONValue.FastParser.parse($0) }
    #expect(declined == nil)
    #expect(throws: JSONValue.ParseError.self) { try JSONValue(parsing: Data(bytes)) }
  }
}
