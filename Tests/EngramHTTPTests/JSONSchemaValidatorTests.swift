import EngramCore
import EngramTestSupport
import Testing

@testable import EngramHTTP

@Suite(.timeLimit(.minutes(5)), .watchdog) struct JSONSchemaValidatorTests {
  let schema: JSONValue = [
    "type": "object",
    "properties": [
      "query": ["type": "string", "minLength": 1, "maxLength": 5],
      "k": ["type": "integer", "minimum": 1, "maximum": 100],
      "weight": ["type": "number", "exclusiveMinimum": 0, "exclusiveMaximum": 1],
      "mode": ["type": "string", "enum": ["hybrid", "vector"]],
      "tags": ["type": "array", "items": ["type": "string"], "minItems": 1, "maxItems": 2],
      "filters": ["type": ["object", "null"], "properties": ["kind": ["type": "string"]]],
    ],
    "required": ["query"],
    "additionalProperties": false,
  ]

  @Test func acceptsConformingArguments() {
    let arguments: JSONValue = [
      "query": "hi", "k": 5, "weight": 0.5, "mode": "vector", "tags": ["a"], "filters": ["kind": "fact"],
    ]
    #expect(JSONSchemaValidator.problems(in: arguments, schema: schema).isEmpty)
    #expect(
      JSONSchemaValidator.problems(in: ["query": "x", "k": 3.0, "filters": nil], schema: schema).isEmpty)
  }

  @Test(arguments: [
    (["k": 1] as JSONValue, "missing required 'query'"),
    (["query": 3] as JSONValue, "'query' must be a string, got integer 3"),
    (["query": ""] as JSONValue, "'query' must have at least 1 character"),
    (["query": "toolong"] as JSONValue, "'query' must have at most 5 characters, got 7"),
    (["query": "q", "k": 0] as JSONValue, "'k' must be at least 1, got 0"),
    (["query": "q", "k": 101] as JSONValue, "'k' must be at most 100, got 101"),
    (["query": "q", "k": 2.5] as JSONValue, "'k' must be an integer, got number 2.5"),
    (["query": "q", "weight": 1] as JSONValue, "'weight' must be less than 1, got 1"),
    (["query": "q", "weight": 0] as JSONValue, "'weight' must be greater than 0, got 0"),
    (
      ["query": "q", "mode": "fuzzy"] as JSONValue, #"'mode' must be one of "hybrid", "vector", got "fuzzy""#
    ),
    (["query": "q", "tags": []] as JSONValue, "'tags' must have at least 1 item"),
    (["query": "q", "tags": ["a", "b", "c"]] as JSONValue, "'tags' must have at most 2 items, got 3"),
    (["query": "q", "tags": ["a", 1]] as JSONValue, "'tags[1]' must be a string, got integer 1"),
    (
      ["query": "q", "filters": ["kind": true]] as JSONValue,
      "'filters.kind' must be a string, got boolean true"
    ),
    (["query": "q", "filters": 1] as JSONValue, "'filters' must be an object or a null, got integer 1"),
    (
      ["query": "q", "extra": 1] as JSONValue,
      "unknown 'extra' (allowed: filters, k, mode, query, tags, weight)"
    ),
    ([1] as JSONValue, "arguments must be an object, got array [1]"),
  ])
  func reportsEachProblem(arguments: JSONValue, expected: String) {
    #expect(JSONSchemaValidator.problems(in: arguments, schema: schema) == [expected])
  }

  @Test func ignoresUnknownKeywordsAndNonObjectSchemas() {
    #expect(JSONSchemaValidator.problems(in: "x", schema: ["pattern": "^y$"]).isEmpty)
    #expect(JSONSchemaValidator.problems(in: "x", schema: true).isEmpty)
  }
}
