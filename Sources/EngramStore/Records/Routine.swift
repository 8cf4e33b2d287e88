import Foundation

/// A routine (`routines`): a name the user says and the requests it stands for, run as one
/// plan. Each step keeps its request text, routed again when the routine runs, and the skill
/// it routed to when saved (so a step whose skill is disabled later is named, not lost).
public struct Routine: Sendable, Hashable {
  /// One request of a routine.
  public struct Step: Sendable, Hashable, Codable {
    /// The request as the user wrote it ("show today's calendar").
    public var text: String
    /// The skill the request routed to when the routine was saved, or nil.
    public var skill: String?

    /// Creates a step.
    public init(text: String, skill: String? = nil) {
      self.text = text
      self.skill = skill
    }
  }

  /// The name as the user wrote it.
  public var name: String
  /// The requests, in order.
  public var steps: [Step]
  /// Whether saying the name runs it.
  public var enabled: Bool
  /// When it was first saved.
  public var createdAt: Date
  /// Last change.
  public var updatedAt: Date

  /// Creates a routine.
  public init(name: String, steps: [Step], enabled: Bool = true, createdAt: Date, updatedAt: Date? = nil) {
    self.name = name
    self.steps = steps
    self.enabled = enabled
    self.createdAt = createdAt
    self.updatedAt = updatedAt ?? createdAt
  }

  /// The name folded for matching and as the key: lower case, punctuation dropped, runs of
  /// white space as one space ("Evening  Wrap Up!" is "evening wrap up").
  public static func key(_ name: String) -> String {
    let kept = name.lowercased().unicodeScalars.map { scalar -> Character in
      CharacterSet.punctuationCharacters.contains(scalar) || CharacterSet.symbols.contains(scalar)
        ? " " : Character(scalar)
    }
    return String(kept).split(whereSeparator: \.isWhitespace).joined(separator: " ")
  }

  /// This routine's key (`key(_:)` of its name).
  public var key: String { Self.key(name) }

  /// The steps as the `steps` column stores them (a JSON array).
  package func stepsJSON() throws -> String {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
    return String(decoding: try encoder.encode(steps), as: UTF8.self)
  }

  /// Reads `name, steps, enabled, created_at, updated_at` from `row`.
  package init(row: some Row) throws {
    name = row.string(at: 0)
    let json = row.string(at: 1)
    do {
      steps = try JSONDecoder().decode([Step].self, from: Data(json.utf8))
    } catch {
      throw StoreError.invalidColumnValue(table: "routines", column: "steps", value: String(json.prefix(80)))
    }
    enabled = row.bool(at: 2)
    createdAt = row.date(at: 3)
    updatedAt = row.date(at: 4)
  }
}
