/// Why an argument was rejected.
public enum InvalidArgumentReason: Sendable, Hashable {
  /// The value could not be read as the expected type; `value` is what arrived.
  case expectedType(ParameterType, value: String)
  /// The value was empty text.
  case empty
  /// The number was NaN or infinite.
  case notFinite
  /// The schema has no parameter with this name.
  case unknownParameter
  /// An arithmetic expression that does not evaluate (the calculator's `expression`).
  case arithmetic(ArithmeticError)
  /// A skill-specific reason, already phrased for the log.
  case other(String)
}

/// Errors raised while validating, confirming or executing a skill.
public enum SkillError: Error, Sendable, Hashable {
  /// A required argument is absent.
  case missingArgument(name: String)
  /// An argument is present but unusable.
  case invalidArgument(name: String, reason: InvalidArgumentReason)
  /// The skill (or the memory behind it) refused the operation.
  case permissionDenied(skill: String)
  /// The skill did not finish within its timeout.
  case timeout(skill: String, after: Duration)
  /// The skill ran and failed; `reason` is for the log and trace.
  case executionFailed(skill: String, reason: String)
  /// The user declined the confirmation of a side effect.
  case confirmationCancelled(skill: String)
  /// The calculator was asked to divide by zero.
  case divisionByZero
  /// A date or time argument names no instant that can be read ("the 32nd", "June 31", "25:00");
  /// `text` is what the user wrote, so the reply can quote it.
  case unreadableDate(name: String, text: String)
}
