import Engram
import Foundation

/// Reads a model reply in the agent-action format: one JSON object, possibly in a ```json fence.
public enum AgentActionParser {
  /// Parses `reply`; when `knownSkills` is given, skill ids outside it are rejected.
  /// - Throws: `AgentActionParseError` describing the first problem found.
  public static func parse(_ reply: String, knownSkills: Set<String>? = nil) throws(AgentActionParseError)
    -> AgentAction
  {
    guard let objectText = extractObject(from: reply) else { throw .noJSONObject }
    let value: JSONValue
    do {
      value = try JSONDecoder().decode(JSONValue.self, from: Data(objectText.utf8))
    } catch {
      throw .invalidJSON(reason: String(describing: error))
    }
    guard case .object(let object) = value else { throw .noJSONObject }
    let shapes = ["skill", "final", "plan"].filter { object[$0] != nil }
    guard shapes.count == 1 else { throw .unknownShape(keys: object.keys.sorted()) }
    let action: AgentAction
    switch shapes[0] {
    case "final":
      try checkKeys(object, allowed: ["final"])
      guard case .string(let text) = object["final"]! else {
        throw .wrongType(path: "final", expected: "string")
      }
      action = .final(text)
    case "skill":
      action = .skill(try step(object, path: ""))
    default:
      try checkKeys(object, allowed: ["plan"])
      guard case .array(let items) = object["plan"]! else {
        throw .wrongType(path: "plan", expected: "array")
      }
      guard !items.isEmpty else { throw .emptyPlan }
      var steps: [PlanStep] = []
      for (index, item) in items.enumerated() {
        guard case .object(let stepObject) = item else {
          throw .wrongType(path: "plan[\(index)]", expected: "object")
        }
        steps.append(try step(stepObject, path: "plan[\(index)]."))
      }
      action = .plan(steps)
    }
    if let knownSkills {
      let ids: [String]
      switch action {
      case .skill(let step): ids = [step.skill]
      case .plan(let steps): ids = steps.map(\.skill)
      case .final: ids = []
      }
      if let unknown = ids.first(where: { !knownSkills.contains($0) }) { throw .unknownSkill(unknown) }
    }
    return action
  }

  private static func checkKeys(_ object: [String: JSONValue], allowed: Set<String>)
    throws(AgentActionParseError)
  {
    if let extra = object.keys.sorted().first(where: { !allowed.contains($0) }) {
      throw .unexpectedKey(extra)
    }
  }

  private static func step(_ object: [String: JSONValue], path: String) throws(AgentActionParseError)
    -> PlanStep
  {
    try checkKeys(object, allowed: ["skill", "arguments"])
    guard case .string(let id)? = object["skill"], !id.isEmpty else {
      throw .wrongType(path: path + "skill", expected: "non-empty string")
    }
    var arguments = SkillArguments()
    switch object["arguments"] {
    case nil, .null?:
      break
    case .object(let values)?:
      for (name, value) in values {
        switch value {
        case .string(let text): arguments[name] = .string(text)
        case .int(let number): arguments[name] = .int(number)
        case .double(let number): arguments[name] = .number(number)
        case .bool(let flag): arguments[name] = .bool(flag)
        case .null: continue
        case .array, .object: throw .unsupportedArgumentValue(path: "\(path)arguments.\(name)")
        }
      }
    default:
      throw .wrongType(path: path + "arguments", expected: "object")
    }
    return PlanStep(skill: id, arguments: arguments)
  }

  /// The JSON object text in `reply`: a fenced block's content if present, then the first
  /// balanced `{...}` (string-aware, so braces inside strings do not count).
  static func extractObject(from reply: String) -> Substring? {
    var text = Substring(reply)
    if let fence = reply.range(of: "```") {
      var body = reply[fence.upperBound...]
      if let newline = body.firstIndex(of: "\n"), body[..<newline].allSatisfy(\.isLetter) {
        body = body[body.index(after: newline)...]
      }
      if let close = body.range(of: "```") { text = body[..<close.lowerBound] } else { text = body }
    }
    guard let start = text.firstIndex(of: "{") else { return nil }
    var depth = 0
    var inString = false
    var escaped = false
    var index = start
    while index < text.endIndex {
      let character = text[index]
      if inString {
        if escaped {
          escaped = false
        } else if character == "\\" {
          escaped = true
        } else if character == "\"" {
          inString = false
        }
      } else if character == "\"" {
        inString = true
      } else if character == "{" {
        depth += 1
      } else if character == "}" {
        depth -= 1
        if depth == 0 { return text[start...index] }
      }
      index = text.index(after: index)
    }
    return nil
  }
}
