import EngramStore
import Foundation

/// Why an agent record was refused before anything was written.
public enum AgentRecordError: Error, Sendable, Hashable {
  /// A required text field (`title`, `skillID`, `executionID`, `summary`) is empty or blank.
  case emptyField(String)
  /// A JSON text field (`arguments`) is not a JSON object.
  case invalidJSON(field: String)
  /// A duration must be finite and not negative (milliseconds).
  case invalidDuration(Double)
  /// Step numbers start at 0 (routing) or 1 (skills); negative steps are refused.
  case invalidStep(Int)
  /// A condition was given for an item it cannot guard: only a dated reminder keeps one.
  case misplacedCondition(kind: AgentItemKind)
  /// No row with this id in `table`.
  case notFound(table: String, id: Int64)
  /// A routine was refused: its name is empty (after folding) or it has no steps.
  case invalidRoutine(name: String, reason: RoutineProblem)
  /// No routine has this name.
  case routineNotFound(name: String)

  /// What is wrong with a routine that was refused.
  public enum RoutineProblem: Sendable, Hashable {
    /// The name has no letters or digits.
    case emptyName
    /// It has no steps, or a blank one.
    case noSteps
  }
}
