// Which built-in skills destroy what they act on. Kept beside `Skill.isDestructive` (the
// built-in skills' own files are another change's); each could as well say it itself.

extension ForgetSkill {
  /// Forgetting removes a memory and every copy of it: destructive.
  public var isDestructive: Bool { true }
}
