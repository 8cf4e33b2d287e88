import Foundation
import Testing

@testable import Engram

@Suite struct JSONValueTests {
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
