/// Runs one skill call: validates arguments, applies the timeout, retries read-only skills.
///
/// Confirmation is the caller's job (the agent asks before calling `run` for a skill whose
/// `requiresConfirmation` is true); this type never waits for a person.
public enum SkillExecutor {
  /// Validates `arguments` and executes `skill`, each attempt bounded by `skill.timeout`.
  ///
  /// A failed attempt is repeated up to `skill.effectiveRetryCount` times (zero for skills with
  /// side effects). Validation errors, cancellations and `SkillError`s the skill throws on
  /// purpose are not retried.
  /// - Throws: `SkillError` (validation, `.timeout`, `.executionFailed` wrapping other errors),
  ///   or `CancellationError` when the calling task is cancelled.
  public static func run(
    _ skill: any Skill, arguments: SkillArguments, context: SkillContext
  ) async throws -> SkillOutput {
    let validated = try ArgumentValidator.validate(
      arguments, against: skill.inputSchema, timeZone: context.clock.timeZone)
    var attempt = 0
    while true {
      do {
        return try await runOnce(skill, arguments: validated, context: context)
      } catch let error as SkillError {
        guard case .timeout = error, attempt < skill.effectiveRetryCount else { throw error }
      } catch is CancellationError {
        throw CancellationError()
      } catch {
        guard attempt < skill.effectiveRetryCount else {
          throw SkillError.executionFailed(skill: skill.id, reason: String(describing: error))
        }
      }
      attempt += 1
    }
  }

  private static func runOnce(
    _ skill: any Skill, arguments: SkillArguments, context: SkillContext
  ) async throws -> SkillOutput {
    let id = skill.id
    let limit = skill.timeout
    return try await withThrowingTaskGroup(of: SkillOutput?.self) { group in
      group.addTask { try await skill.execute(arguments: arguments, context: context) }
      group.addTask {
        try await Task.sleep(for: limit)
        return nil
      }
      defer { group.cancelAll() }
      guard let first = try await group.next(), let output = first else {
        try Task.checkCancellation()
        throw SkillError.timeout(skill: id, after: limit)
      }
      return output
    }
  }
}
