import EngramCore

/// Checks a JSON value against the subset of JSON Schema that tool input schemas use.
///
/// Supported keywords: `type` (a name or a list), `enum`, `const`, `properties`, `required`,
/// `additionalProperties` (`false` or a schema), `items`, `minItems`, `maxItems`, `minLength`,
/// `maxLength`, `minimum`, `maximum`, `exclusiveMinimum`, `exclusiveMaximum`. Other keywords are
/// ignored, so a schema using them is checked less strictly, never rejected wrongly.
public enum JSONSchemaValidator {
  /// The problems found, each a sentence naming the path (`'k' must be an integer, got string "five"`);
  /// empty when `value` conforms.
  /// - Complexity: O(size of `value`) for the supported keywords.
  public static func problems(in value: JSONValue, schema: JSONValue) -> [String] {
    var found: [String] = []
    check(value, schema: schema, path: "", into: &found)
    return found
  }

  private static func describe(_ path: String) -> String {
    path.isEmpty ? "arguments" : "'\(path)'"
  }

  private static func matches(_ value: JSONValue, type: String) -> Bool {
    switch type {
    case "null": return value.isNull
    case "boolean": return value.boolValue != nil
    case "integer": return value.intValue != nil
    case "number": return value.doubleValue != nil
    case "string": return value.stringValue != nil
    case "array": return value.arrayValue != nil
    case "object": return value.objectValue != nil
    default: return true
    }
  }

  private static func preview(_ value: JSONValue) -> String {
    let text = value.jsonText
    return text.count > 40 ? String(text.prefix(39)) + "…" : text
  }

  private static func check(_ value: JSONValue, schema: JSONValue, path: String, into found: inout [String]) {
    guard case .object = schema else { return }
    let types: [String] =
      schema["type"].flatMap { type in
        type.stringValue.map { [$0] } ?? type.arrayValue?.compactMap(\.stringValue)
      } ?? []
    if !types.isEmpty && !types.contains(where: { matches(value, type: $0) }) {
      let expected = types.map {
        ($0 == "integer" || $0 == "array" || $0 == "object") ? "an \($0)" : "a \($0)"
      }
      found.append(
        "\(describe(path)) must be \(expected.joined(separator: " or ")), got \(value.typeName) \(preview(value))"
      )
      return
    }
    if let options = schema["enum"]?.arrayValue, !options.contains(value) {
      found.append(
        "\(describe(path)) must be one of \(options.map(\.jsonText).joined(separator: ", ")), got \(preview(value))"
      )
    }
    if let constant = schema["const"], constant != value {
      found.append("\(describe(path)) must be \(constant.jsonText), got \(preview(value))")
    }
    switch value {
    case .string(let text):
      let length = text.count
      if let minimum = schema["minLength"]?.intValue, length < minimum {
        found.append("\(describe(path)) must have at least \(minimum) character\(minimum == 1 ? "" : "s")")
      }
      if let maximum = schema["maxLength"]?.intValue, length > maximum {
        found.append("\(describe(path)) must have at most \(maximum) characters, got \(length)")
      }
    case .int, .double:
      let number = value.doubleValue ?? 0
      if let minimum = schema["minimum"]?.doubleValue, number < minimum {
        found.append(
          "\(describe(path)) must be at least \(schema["minimum"]!.jsonText), got \(value.jsonText)")
      }
      if let maximum = schema["maximum"]?.doubleValue, number > maximum {
        found.append(
          "\(describe(path)) must be at most \(schema["maximum"]!.jsonText), got \(value.jsonText)")
      }
      if let bound = schema["exclusiveMinimum"]?.doubleValue, number <= bound {
        found.append(
          "\(describe(path)) must be greater than \(schema["exclusiveMinimum"]!.jsonText), got \(value.jsonText)"
        )
      }
      if let bound = schema["exclusiveMaximum"]?.doubleValue, number >= bound {
        found.append(
          "\(describe(path)) must be less than \(schema["exclusiveMaximum"]!.jsonText), got \(value.jsonText)"
        )
      }
    case .array(let elements):
      if let minimum = schema["minItems"]?.intValue, elements.count < minimum {
        found.append("\(describe(path)) must have at least \(minimum) item\(minimum == 1 ? "" : "s")")
      }
      if let maximum = schema["maxItems"]?.intValue, elements.count > maximum {
        found.append("\(describe(path)) must have at most \(maximum) items, got \(elements.count)")
      }
      if let itemSchema = schema["items"] {
        for (index, element) in elements.enumerated() {
          check(element, schema: itemSchema, path: "\(path)[\(index)]", into: &found)
        }
      }
    case .object(let members):
      let properties = schema["properties"]?.objectValue ?? [:]
      for name in schema["required"]?.arrayValue?.compactMap(\.stringValue) ?? [] where members[name] == nil {
        found.append("missing required \(describe(join(path, name)))")
      }
      for (name, member) in members.sorted(by: { $0.key < $1.key }) {
        if let propertySchema = properties[name] {
          check(member, schema: propertySchema, path: join(path, name), into: &found)
        } else if let additional = schema["additionalProperties"] {
          if additional == .bool(false) {
            let allowed = properties.keys.sorted().joined(separator: ", ")
            found.append(
              "unknown \(describe(join(path, name)))" + (allowed.isEmpty ? "" : " (allowed: \(allowed))"))
          } else {
            check(member, schema: additional, path: join(path, name), into: &found)
          }
        }
      }
    default:
      break
    }
  }

  private static func join(_ path: String, _ name: String) -> String {
    path.isEmpty ? name : path + "." + name
  }
}
