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
}
