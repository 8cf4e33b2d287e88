/// The skills that need only `AgentMemory` and the clock.
public enum BuiltInSkills {
  /// Every built-in skill, in the registration order that breaks rule-score ties.
  public static func all() -> [any Skill] {
    [
      ReminderSkill(), CalendarSkill(), NoteSkill(), RememberSkill(), RecallSkill(), ForgetSkill(),
      TimeNowSkill(),
      CalculatorSkill(),
      AgendaListSkill(kind: .reminder), AgendaCancelSkill(kind: .reminder),
      AgendaUpdateSkill(kind: .reminder),
      AgendaListSkill(kind: .event), AgendaCancelSkill(kind: .event), AgendaUpdateSkill(kind: .event),
    ]
  }

  /// Registers every built-in skill in `registry`.
  /// - Throws: `SkillRegistryError.duplicateID` if one is already registered, or the store's error.
  public static func register(in registry: SkillRegistry) throws {
    for skill in all() { try registry.register(skill) }
  }
}
