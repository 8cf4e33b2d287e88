import EngramCore
import EngramHTTP
import EngramTestSupport
import Foundation
import Testing

/// Argument types declared once: the schema and the decoding come from the same fields.
@Suite(.timeLimit(.minutes(5)), .watchdog) struct ArgumentsTests {
  enum Colour: String, ArgumentEnum { case red, green }

  struct Inner: Arguments, Equatable {
    var tags: [String]
    enum CodingKeys: String, CodingKey { case tags }
    static let tags = ArgumentField<[String]>(CodingKeys.tags, "Labels.", default: [])
    static let fields: [any ArgumentFieldDescribing] = [tags]
    init(from decoder: any Decoder) throws {
      tags = try decoder.container(keyedBy: CodingKeys.self).decode(Self.tags)
    }
  }

  struct Sample: Arguments, Equatable {
    var name: String
    var count: Int
    var colour: Colour
    var note: String?
    var inner: Inner?
    enum CodingKeys: String, CodingKey { case name, count, colour, note, inner }
    static let name = ArgumentField<String>(CodingKeys.name, "Who.", minLength: 1)
    static let count = ArgumentField<Int>(CodingKeys.count, "How many.", default: 3, minimum: 1, maximum: 9)
    static let colour = ArgumentField<Colour>(CodingKeys.colour, default: .green)
    static let note = ArgumentField<String?>(CodingKeys.note)
    static let inner = ArgumentField<Inner?>(CodingKeys.inner)
    static let fields: [any ArgumentFieldDescribing] = [name, count, colour, note, inner]
    init(from decoder: any Decoder) throws {
      let values = try decoder.container(keyedBy: CodingKeys.self)
      name = try values.decode(Self.name)
      count = try values.decode(Self.count)
      colour = try values.decode(Self.colour)
      note = try values.decode(Self.note)
      inner = try values.decode(Self.inner)
    }
  }

  @Test func theSchemaComesFromTheFields() {
    let schema = Sample.jsonSchema
    #expect(schema["type"] == "object")
    #expect(schema["required"] == ["name"])
    #expect(schema["additionalProperties"] == false)
    #expect(
      schema["properties"]?["count"] == [
        "type": "integer", "description": "How many. Default 3.", "default": 3, "minimum": 1, "maximum": 9,
      ])
    #expect(schema["properties"]?["colour"]?["enum"] == ["red", "green"])
    #expect(schema["properties"]?["colour"]?["default"] == "green")
    #expect(schema["properties"]?["name"]?["minLength"] == 1)
    #expect(schema["properties"]?["inner"]?["properties"]?["tags"]?["items"] == ["type": "string"])
    // What the schema allows, the JSON Schema check accepts.
    #expect(
      JSONSchemaValidator.problems(in: ["name": "x", "inner": ["tags": ["a"]]], schema: schema).isEmpty)
  }

  @Test func decodingAppliesTheDeclaredDefaults() throws {
    let sample = try Sample.decode(["name": "Ann", "note": .null])
    #expect(sample.count == 3)
    #expect(sample.colour == .green)
    #expect(sample.note == nil)
    #expect(sample.inner == nil)
    let full = try Sample.decode(["name": "Ann", "count": 9, "colour": "red", "inner": ["tags": ["a", "b"]]])
    #expect(full.count == 9)
    #expect(full.colour == .red)
    #expect(full.inner?.tags == ["a", "b"])
  }

  static let wrongFields: [(members: [String: JSONValue], sentence: String)] = [
    (["count": 2], "'name' is missing; pass a non-empty string"),
    (["name": 5], "'name' must be a non-empty string"),
    (["name": ""], "'name' must be a non-empty string"),
    (["name": "x", "count": "two"], "'count' must be an integer from 1 to 9"),
    (["name": "x", "count": 10], "'count' must be an integer from 1 to 9"),
    (["name": "x", "count": 2.5], "'count' must be an integer from 1 to 9"),
    (["name": "x", "colour": "blue"], "'colour' must be one of red, green"),
    (["name": "x", "inner": ["tags": [1]]], "'inner.tags' must be a list, each a string"),
    (["name": "x", "inner": "tags"], "'inner' must be an object"),
  ]

  @Test(arguments: wrongFields)
  func aWrongFieldIsOneSentenceNamingIt(members: [String: JSONValue], sentence: String) {
    #expect(throws: ArgumentError.self) { try Sample.decode(members) }
    do {
      _ = try Sample.decode(members)
    } catch {
      #expect(error.description == sentence)
    }
  }

  @Test func queryParametersBecomeTheirFieldsTypes() throws {
    let sample = try Sample.decode(query: ["name": "Ann", "count": "4", "colour": "red", "note": ""])
    #expect(sample.count == 4)
    #expect(sample.colour == .red)
    #expect(sample.note == nil)  // an empty parameter is absent
    #expect(throws: ArgumentError(path: "count", "must be an integer from 1 to 9")) {
      try Sample.decode(query: ["name": "Ann", "count": "many"])
    }
  }
}
