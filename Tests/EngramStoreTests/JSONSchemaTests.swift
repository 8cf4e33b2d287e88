import EngramTestSupport
import Foundation
import Testing

/// A validator for the JSON Schema subset the files in schemas/ use: type, enum, const,
/// required, properties, additionalProperties, items, oneOf, local $ref, minimum,
/// maximum, minLength, pattern. Returns the paths that failed.
struct MiniSchemaValidator {
  let root: [String: Any]

  func errors(_ value: Any, _ schema: [String: Any], path: String = "$") -> [String] {
    var errors: [String] = []
    if let reference = schema["$ref"] as? String {
      let name = String(reference.dropFirst("#/$defs/".count))
      guard let definitions = root["$defs"] as? [String: Any],
        let target = definitions[name] as? [String: Any]
      else { return ["\(path): unresolved \(reference)"] }
      errors += self.errors(value, target, path: path)
    }
    if let type = schema["type"] {
      let types = (type as? [String]) ?? [type as? String ?? ""]
      if !types.contains(where: { matches(value, $0) }) { errors.append("\(path): not \(types)") }
    }
    if let options = schema["enum"] as? [Any], !options.contains(where: { equal($0, value) }) {
      errors.append("\(path): not in enum")
    }
    if let constant = schema["const"], !equal(constant, value) { errors.append("\(path): not const") }
    if let number = value as? NSNumber, !Self.isBoolean(value) {
      if let minimum = schema["minimum"] as? Double, number.doubleValue < minimum {
        errors.append("\(path): < min")
      }
      if let maximum = schema["maximum"] as? Double, number.doubleValue > maximum {
        errors.append("\(path): > max")
      }
    }
    if let string = value as? String {
      if let minLength = schema["minLength"] as? Int, string.count < minLength {
        errors.append("\(path): short")
      }
      if let pattern = schema["pattern"] as? String,
        string.range(of: pattern, options: .regularExpression) == nil
      {
        errors.append("\(path): pattern")
      }
    }
    if let object = value as? [String: Any] {
      for key in schema["required"] as? [String] ?? [] where object[key] == nil {
        errors.append("\(path): missing \(key)")
      }
      let properties = schema["properties"] as? [String: Any] ?? [:]
      for (key, item) in object {
        if let propertySchema = properties[key] as? [String: Any] {
          errors += self.errors(item, propertySchema, path: "\(path).\(key)")
        } else if let additional = schema["additionalProperties"] as? [String: Any] {
          errors += self.errors(item, additional, path: "\(path).\(key)")
        } else if (schema["additionalProperties"] as? Bool) == false {
          errors.append("\(path): unexpected \(key)")
        }
      }
    }
    if let array = value as? [Any], let itemSchema = schema["items"] as? [String: Any] {
      for (index, item) in array.enumerated() {
        errors += self.errors(item, itemSchema, path: "\(path)[\(index)]")
      }
    }
    if let options = schema["oneOf"] as? [[String: Any]] {
      let passing = options.filter { self.errors(value, $0, path: path).isEmpty }.count
      if passing != 1 { errors.append("\(path): \(passing) oneOf branches match") }
    }
    return errors
  }

  private func matches(_ value: Any, _ type: String) -> Bool {
    let isBool = Self.isBoolean(value)
    switch type {
    case "object": return value is [String: Any]
    case "array": return value is [Any]
    case "string": return value is String
    case "boolean": return isBool
    case "null": return value is NSNull
    case "number": return value is NSNumber && !isBool
    case "integer":
      guard let number = value as? NSNumber, !isBool else { return false }
      return number.doubleValue.rounded() == number.doubleValue
    default: return false
    }
  }

  /// JSON booleans arrive as NSNumber with the Objective-C type "c" (char).
  static func isBoolean(_ value: Any) -> Bool {
    guard let number = value as? NSNumber else { return false }
    return String(cString: number.objCType) == "c"
  }

  private func equal(_ lhs: Any, _ rhs: Any) -> Bool {
    (lhs as? NSObject)?.isEqual(rhs) ?? false
  }
}

@Suite(.timeLimit(.minutes(5)), .watchdog) struct JSONSchemaTests {
  static let names = ["conversation-import", "memory-export", "structured-summary"]

  private func load(_ name: String) throws -> [String: Any] {
    let url = repositoryRoot.appendingPathComponent("schemas/\(name).schema.json")
    let object = try JSONSerialization.jsonObject(with: Data(contentsOf: url))
    return try #require(object as? [String: Any])
  }

  @Test(arguments: names)
  func examplesValidateAgainstTheirSchema(name: String) throws {
    let schema = try load(name)
    #expect(schema["$schema"] as? String == "https://json-schema.org/draft/2020-12/schema")
    let examples = try #require(schema["examples"] as? [Any])
    #expect(!examples.isEmpty)
    let validator = MiniSchemaValidator(root: schema)
    for example in examples {
      #expect(validator.errors(example, schema) == [])
    }
  }

  @Test func conversationImportRequiresRoleAndContent() throws {
    let schema = try load("conversation-import")
    #expect(schema["required"] as? [String] == ["role", "content"])
    let validator = MiniSchemaValidator(root: schema)
    #expect(!validator.errors(["content": "x"], schema).isEmpty)
    #expect(!validator.errors(["role": "robot", "content": "x"], schema).isEmpty)
    #expect(!validator.errors(["role": "user", "content": "x", "timestamp": true], schema).isEmpty)
    #expect(validator.errors(["role": "user", "content": "", "timestamp": 1.5], schema).isEmpty)
  }

  @Test func memoryExportCoversEveryLineType() throws {
    let schema = try load("memory-export")
    let examples = try #require(schema["examples"] as? [[String: Any]])
    let types = Set(examples.compactMap { $0["type"] as? String })
    #expect(
      types == [
        "header", "session", "message", "summary", "memory", "embedding", "preference", "skill_state",
        "agent_item", "end",
      ])
    let validator = MiniSchemaValidator(root: schema)
    #expect(
      !validator.errors(
        [
          "type": "memory", "id": 1, "kind": "fact", "content": "x", "importance": 2,
          "created_at": 0, "updated_at": 0,
        ], schema
      ).isEmpty)
    #expect(!validator.errors(["type": "unknown"], schema).isEmpty)
    let header = try #require(examples.first { $0["type"] as? String == "header" })
    #expect(header["format"] as? String == "engram-export")
    #expect(header["version"] as? Int == 2)
  }

  @Test func embeddingVectorsAreLittleEndianFloat32Base64() throws {
    let schema = try load("memory-export")
    let examples = try #require(schema["examples"] as? [[String: Any]])
    let line = try #require(examples.first { $0["type"] as? String == "embedding" })
    let text = try #require(line["vector"] as? String)
    let data = try #require(Data(base64Encoded: text))
    let dimension = try #require(line["dimension"] as? Int)
    #expect(data.count == dimension * 4)
    let floats = stride(from: 0, to: data.count, by: 4).map { offset in
      Float(
        bitPattern: data[offset..<offset + 4].enumerated().reduce(UInt32(0)) {
          $0 | UInt32($1.element) << (8 * $1.offset)
        })
    }
    #expect(floats == [1, -2, 3])
  }

  @Test func structuredSummaryRequiresAllSections() throws {
    let schema = try load("structured-summary")
    let validator = MiniSchemaValidator(root: schema)
    #expect(!validator.errors(["topics": []], schema).isEmpty)
    let example = try #require((schema["examples"] as? [[String: Any]])?.first)
    var broken = example
    broken["span"] = ["first_message_id": 1]
    #expect(!validator.errors(broken, schema).isEmpty)
  }
}
