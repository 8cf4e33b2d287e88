import Engram
import Foundation

/// Checks arguments against a skill's input schema and coerces safe string forms.
///
/// `"3"` becomes 3 for an int, `"true"`/`"yes"`/`"是"` become true, ISO 8601 text becomes a date
/// (date-only and offset-less forms are read in the given time zone). Anything else is rejected
/// with a typed error; arguments are never partly applied.
public enum ArgumentValidator {
  /// Returns `arguments` coerced to the schema's types.
  /// - Throws: `SkillError.missingArgument` for an absent required parameter (empty text counts
  ///   as absent), `SkillError.unreadableDate` for date text that is not ISO 8601 or names no
  ///   real day, `SkillError.invalidArgument` for an unknown name or another unconvertible value.
  public static func validate(
    _ arguments: SkillArguments, against schema: SkillInputSchema, timeZone: TimeZone
  ) throws(SkillError) -> SkillArguments {
    for name in arguments.names where schema.parameter(named: name) == nil {
      throw .invalidArgument(name: name, reason: .unknownParameter)
    }
    var result = SkillArguments()
    for parameter in schema.parameters {
      guard let value = arguments[parameter.name] else {
        if parameter.isRequired { throw .missingArgument(name: parameter.name) }
        continue
      }
      if case .string(let text) = value, text.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty {
        if parameter.isRequired { throw .missingArgument(name: parameter.name) }
        continue
      }
      result[parameter.name] = try coerce(value, to: parameter.type, name: parameter.name, timeZone: timeZone)
    }
    return result
  }

  /// Converts one value to `type`.
  /// - Throws: `SkillError.unreadableDate` for unreadable date text, `SkillError.invalidArgument`
  ///   when the value has no safe reading as `type`.
  public static func coerce(
    _ value: SkillValue, to type: ParameterType, name: String, timeZone: TimeZone
  ) throws(SkillError) -> SkillValue {
    let mismatch = SkillError.invalidArgument(
      name: name, reason: .expectedType(type, value: value.description))
    switch (type, value) {
    case (.string, .string):
      return value
    case (.string, .int), (.string, .number), (.string, .bool):
      return .string(value.description)
    case (.int, .int):
      return value
    case (.int, .number(let number)):
      guard number.isFinite else { throw .invalidArgument(name: name, reason: .notFinite) }
      guard let whole = Int(exactly: number) else { throw mismatch }
      return .int(whole)
    case (.int, .string(let text)):
      let trimmed = text.trimmingCharacters(in: .whitespaces)
      if let whole = Int(trimmed) { return .int(whole) }
      if let number = Double(trimmed), number.isFinite, let whole = Int(exactly: number) {
        return .int(whole)
      }
      throw mismatch
    case (.number, .number(let number)):
      guard number.isFinite else { throw .invalidArgument(name: name, reason: .notFinite) }
      return value
    case (.number, .int(let whole)):
      return .number(Double(whole))
    case (.number, .string(let text)):
      guard let number = Double(text.trimmingCharacters(in: .whitespaces)) else { throw mismatch }
      guard number.isFinite else { throw .invalidArgument(name: name, reason: .notFinite) }
      return .number(number)
    case (.bool, .bool):
      return value
    case (.bool, .int(let whole)) where whole == 0 || whole == 1:
      return .bool(whole == 1)
    case (.bool, .string(let text)):
      switch text.trimmingCharacters(in: .whitespaces).lowercased() {
      case "true", "yes", "y", "1", "on", "是", "对", "好": return .bool(true)
      case "false", "no", "n", "0", "off", "否", "不", "不是": return .bool(false)
      default: throw mismatch
      }
    case (.date, .date):
      return value
    case (.date, .string(let text)):
      // Skills put text they could not read as a date here ("the 32nd"); so may a planner.
      guard let date = parseISODate(text, timeZone: timeZone) else {
        throw .unreadableDate(name: name, text: text.trimmingCharacters(in: .whitespacesAndNewlines))
      }
      return .date(date)
    default:
      throw mismatch
    }
  }

  /// Parses a typed date with the one shared rule (`DateParser`): `YYYY-MM-DD`,
  /// `YYYY-MM-DD HH:MM[:SS]` and `YYYY-MM-DDTHH:MM[:SS[.fff]][Z|±HH:MM]`; forms without an
  /// offset are read in `timeZone`. Out-of-range fields (month 13, Feb 30) fail.
  public static func parseISODate(_ text: String, timeZone: TimeZone) -> Date? {
    DateParser.parse(text, timeZone: timeZone)?.date
  }
}
