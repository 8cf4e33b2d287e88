/// The model's reply, in the fixed format of `schemas/agent-action.schema.json`.
public enum AgentAction: Sendable, Hashable {
  /// `{"skill": id, "arguments": {...}}`: run one skill.
  case skill(PlanStep)
  /// `{"final": text}`: answer directly.
  case final(String)
  /// `{"plan": [{"skill", "arguments"}, ...]}`: run several skills in order.
  case plan([PlanStep])
}

/// Why a model reply is not a valid `AgentAction`.
public enum AgentActionParseError: Error, Sendable, Hashable {
  /// The reply contains no JSON object.
  case noJSONObject
  /// The JSON could not be decoded; `reason` is the decoder's description.
  case invalidJSON(reason: String)
  /// The object has none of `skill`, `final`, `plan`, or more than one of them.
  case unknownShape(keys: [String])
  /// A key outside the format.
  case unexpectedKey(String)
  /// A field has the wrong JSON type (`path` such as `plan[1].arguments`).
  case wrongType(path: String, expected: String)
  /// `plan` is an empty array.
  case emptyPlan
  /// An argument is an array or object (arguments are scalars).
  case unsupportedArgumentValue(path: String)
  /// A skill id not in the catalog.
  case unknownSkill(String)
}
