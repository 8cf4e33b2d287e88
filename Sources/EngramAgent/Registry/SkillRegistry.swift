import Synchronization

/// Errors from the skill registry.
public enum SkillRegistryError: Error, Sendable, Hashable {
  /// A skill with this id is already registered.
  case duplicateID(String)
  /// No skill with this id is registered.
  case unknownSkill(String)
  /// The skill is registered but turned off.
  case skillDisabled(String)
  /// A skill id must be non-empty and free of whitespace.
  case invalidID(String)
}

/// A named subset of skills, chosen by tags (for example only office skills).
public struct SkillScenario: Sendable, Hashable {
  /// The scenario's name, for logs.
  public var name: String
  /// A skill belongs when it carries any of these tags or its category is one of them;
  /// an empty set means every skill.
  public var tags: Set<String>

  /// Creates a scenario.
  public init(name: String, tags: Set<String>) {
    self.name = name
    self.tags = tags
  }

  /// Every skill.
  public static let all = SkillScenario(name: "all", tags: [])

  /// Whether `skill` belongs to the scenario.
  public func includes(_ skill: any Skill) -> Bool {
    tags.isEmpty || !tags.isDisjoint(with: skill.tags) || tags.contains(skill.category)
  }
}

/// The set of skills the agent knows, in registration order, with their enabled state.
///
/// Thread-safe; enabled flags are read from and written through a `SkillStateStore`.
public final class SkillRegistry: Sendable {
  private struct State {
    var skills: [any Skill] = []
    var enabled: [String: Bool] = [:]
    var generation = 0
  }

  private let state = Mutex(State())
  private let store: any SkillStateStore

  /// Creates an empty registry persisting enabled flags in `store`.
  public init(store: any SkillStateStore = InMemorySkillStateStore()) { self.store = store }

  /// Adds `skill`; it starts enabled unless the store says otherwise.
  /// - Throws: `SkillRegistryError.duplicateID` or `.invalidID`; errors of the state store.
  public func register(_ skill: any Skill) throws {
    let id = skill.id
    guard !id.isEmpty, !id.contains(where: \.isWhitespace) else { throw SkillRegistryError.invalidID(id) }
    let stored = try store.isEnabled(skillID: id)
    try state.withLock { state throws(SkillRegistryError) in
      guard !state.skills.contains(where: { $0.id == id }) else { throw .duplicateID(id) }
      state.skills.append(skill)
      state.enabled[id] = stored ?? true
      state.generation += 1
    }
  }

  /// Removes the skill with `id`.
  /// - Throws: `SkillRegistryError.unknownSkill`.
  public func unregister(id: String) throws(SkillRegistryError) {
    try state.withLock { state throws(SkillRegistryError) in
      guard let index = state.skills.firstIndex(where: { $0.id == id }) else { throw .unknownSkill(id) }
      state.skills.remove(at: index)
      state.enabled[id] = nil
      state.generation += 1
    }
  }

  /// Turns the skill on or off and persists the flag.
  /// - Throws: `SkillRegistryError.unknownSkill` (state unchanged) or the store's error.
  public func setEnabled(_ enabled: Bool, id: String) async throws {
    guard skill(id: id) != nil else { throw SkillRegistryError.unknownSkill(id) }
    try await store.setEnabled(enabled, skillID: id)
    state.withLock { state in
      if state.enabled[id] != nil {
        state.enabled[id] = enabled
        state.generation += 1
      }
    }
  }

  /// Whether the skill is registered and enabled.
  public func isEnabled(id: String) -> Bool { state.withLock { $0.enabled[id] ?? false } }

  /// The registered skill with `id`, enabled or not.
  public func skill(id: String) -> (any Skill)? { state.withLock { s in s.skills.first { $0.id == id } } }

  /// The enabled skill with `id`.
  /// - Throws: `SkillRegistryError.unknownSkill` or `.skillDisabled`.
  public func enabledSkill(id: String) throws(SkillRegistryError) -> any Skill {
    guard let skill = skill(id: id) else { throw .unknownSkill(id) }
    guard isEnabled(id: id) else { throw .skillDisabled(id) }
    return skill
  }

  /// Every registered skill, in registration order.
  public var allSkills: [any Skill] { state.withLock { $0.skills } }

  /// The enabled skills of `scenario`, in registration order.
  public func skills(in scenario: SkillScenario = .all) -> [any Skill] {
    state.withLock { state in
      state.skills.filter { (state.enabled[$0.id] ?? false) && scenario.includes($0) }
    }
  }

  /// A counter that changes whenever skills or flags change; caches key on it.
  public var generation: Int { state.withLock { $0.generation } }

  /// The catalog text the planner reads: one block per enabled skill of `scenario`.
  public func catalog(for scenario: SkillScenario = .all) -> String {
    skills(in: scenario).map(Self.catalogEntry).joined(separator: "\n")
  }

  /// One skill's catalog block: id, name, description, confirmation, and its parameters.
  public static func catalogEntry(_ skill: any Skill) -> String {
    var lines = ["- \(skill.id) (\(skill.displayName)): \(skill.description)"]
    if skill.requiresConfirmation { lines[0] += " [asks for confirmation]" }
    for parameter in skill.inputSchema.parameters where !parameter.isInternal {
      let required = parameter.isRequired ? "required" : "optional"
      lines.append(
        "    \(parameter.name): \(parameter.type.rawValue), \(required) — \(parameter.description)")
    }
    return lines.joined(separator: "\n")
  }
}
