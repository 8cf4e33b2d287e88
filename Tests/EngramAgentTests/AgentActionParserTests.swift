import EngramTestSupport
import Foundation
import Testing

@testable import EngramAgent

@Suite(.timeLimit(.minutes(5)), .watchdog) struct AgentActionParserTests {
  @Test func parsesTheThreeForms() throws {
    #expect(
      try AgentActionParser.parse(#"{"skill": "calculator", "arguments": {"expression": "1+2"}}"#)
        == .skill(PlanStep(skill: "calculator", arguments: ["expression": .string("1+2")])))
    #expect(try AgentActionParser.parse(#"{"final": "Hi!"}"#) == .final("Hi!"))
    #expect(
      try AgentActionParser.parse(
        #"{"plan": [{"skill": "time.now"}, {"skill": "note.create", "arguments": {"content": "x"}}]}"#)
        == .plan([
          PlanStep(skill: "time.now"), PlanStep(skill: "note.create", arguments: ["content": .string("x")]),
        ]))
  }

  @Test func readsFencedAndChattyReplies() throws {
    let fenced = "Sure!\n```json\n{\"skill\": \"time.now\", \"arguments\": {}}\n```\nDone."
    #expect(try AgentActionParser.parse(fenced) == .skill(PlanStep(skill: "time.now")))
    let chatty = #"I'll answer: {"final": "use {braces} and \"quotes\""} ok"#
    #expect(try AgentActionParser.parse(chatty) == .final(#"use {braces} and "quotes""#))
  }

  @Test func argumentTypesSurvive() throws {
    let action = try AgentActionParser.parse(
      #"{"skill": "s", "arguments": {"a": 3, "b": 2.5, "c": true, "d": "x", "e": null}}"#)
    #expect(
      action
        == .skill(
          PlanStep(
            skill: "s", arguments: ["a": .int(3), "b": .number(2.5), "c": .bool(true), "d": .string("x")])))
  }

  @Test func malformedRepliesAreTyped() {
    #expect(throws: AgentActionParseError.noJSONObject) {
      try AgentActionParser.parse("I think you should rest.")
    }
    #expect(throws: AgentActionParseError.noJSONObject) {
      try AgentActionParser.parse("{\"final\": \"unterminated\"")
    }
    #expect(throws: AgentActionParseError.unknownShape(keys: ["action"])) {
      try AgentActionParser.parse(#"{"action": "x"}"#)
    }
    #expect(throws: AgentActionParseError.unknownShape(keys: ["final", "skill"])) {
      try AgentActionParser.parse(#"{"skill": "a", "final": "b"}"#)
    }
    #expect(throws: AgentActionParseError.unexpectedKey("thought")) {
      try AgentActionParser.parse(#"{"final": "b", "thought": "c"}"#)
    }
    #expect(throws: AgentActionParseError.wrongType(path: "final", expected: "string")) {
      try AgentActionParser.parse(#"{"final": 3}"#)
    }
    #expect(throws: AgentActionParseError.emptyPlan) { try AgentActionParser.parse(#"{"plan": []}"#) }
    #expect(throws: AgentActionParseError.wrongType(path: "plan[0].skill", expected: "non-empty string")) {
      try AgentActionParser.parse(#"{"plan": [{"skill": ""}]}"#)
    }
    #expect(throws: AgentActionParseError.unsupportedArgumentValue(path: "arguments.list")) {
      try AgentActionParser.parse(#"{"skill": "s", "arguments": {"list": [1]}}"#)
    }
    #expect(throws: AgentActionParseError.unknownSkill("nope")) {
      try AgentActionParser.parse(#"{"skill": "nope"}"#, knownSkills: ["time.now"])
    }
  }

  /// The parser and `schemas/agent-action.schema.json` must describe the same three shapes.
  @Test func schemaFileMatchesParser() throws {
    let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
      .deletingLastPathComponent().appendingPathComponent("schemas/agent-action.schema.json")
    let schema = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: url)) as? [String: Any])
    let shapes = try #require(schema["oneOf"] as? [[String: Any]])
    let required = shapes.compactMap { $0["required"] as? [String] }
    #expect(required == [["skill"], ["final"], ["plan"]])
    #expect(shapes.allSatisfy { $0["additionalProperties"] as? Bool == false })
    let properties = shapes.compactMap { ($0["properties"] as? [String: Any]).map { Set($0.keys) } }
    #expect(properties == [["skill", "arguments"], ["final"], ["plan"]])
  }
}
