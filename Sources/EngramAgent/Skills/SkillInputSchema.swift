/// The type of one skill parameter.
public enum ParameterType: String, Sendable, Hashable, Codable, CaseIterable {
  /// Text.
  case string
  /// A whole number.
  case int
  /// A finite number.
  case number
  /// A truth value.
  case bool
  /// An instant (ISO 8601 text when it arrives as a string).
  case date
}

/// One parameter of a skill's input.
public struct SkillParameter: Sendable, Hashable {
  /// The argument name.
  public var name: String
  /// The expected type.
  public var type: ParameterType
  /// Whether a call without it is rejected.
  public var isRequired: Bool
  /// What the parameter means, for the planner's catalog.
  public var description: String
  /// Whether the skill fills it in itself (in `prepare`) and the planner's catalog leaves it out.
  public var isInternal: Bool

  /// Creates a parameter.
  public init(
    _ name: String, _ type: ParameterType, required: Bool = true, description: String,
    isInternal: Bool = false
  ) {
    self.name = name
    self.type = type
    self.isRequired = required
    self.description = description
    self.isInternal = isInternal
  }
}

/// The parameters a skill accepts; arguments are validated against it before execution.
public struct SkillInputSchema: Sendable, Hashable {
  /// The parameters, in display order.
  public var parameters: [SkillParameter]

  /// Creates a schema.
  public init(_ parameters: [SkillParameter] = []) { self.parameters = parameters }

  /// A schema with no parameters.
  public static let empty = SkillInputSchema()

  /// The parameter named `name`, if any.
  public func parameter(named name: String) -> SkillParameter? {
    parameters.first { $0.name == name }
  }
}
