import EngramTestSupport
import Foundation

/// What end-to-end runs of the binary add to a scratch folder.
extension ScratchFolder {
  /// A fresh memory made with the hashing embedder (no model needed).
  func initializedDatabase(_ name: String = "memory.sqlite") async throws -> String {
    let path = path(name)
    let result = try await EngramBinary.run(
      ["init", "--db", path, "--model", "hashing"], environment: Self.environment)
    guard result.status == 0 else { throw SetupError(message: result.standardError) }
    return path
  }

  /// The environment every end-to-end run uses: no colour, no model in reach.
  static let environment = ["NO_COLOR": "1", "ENGRAM_MODEL_DIR": "/nonexistent/engram-model"]

  struct SetupError: Error { var message: String }
}

/// Runs the binary with the test environment.
func engram(_ arguments: String..., input: String? = nil) async throws -> EngramBinary.Result {
  try await EngramBinary.run(arguments, input: input, environment: ScratchFolder.environment)
}

/// The one-object JSON output of a command.
func jsonObject(_ text: String) throws -> [String: Any] {
  let object = try JSONSerialization.jsonObject(with: Data(text.utf8))
  guard let dictionary = object as? [String: Any] else { throw ScratchFolder.SetupError(message: text) }
  return dictionary
}

/// The JSON lines of a command's output.
func jsonLines(_ text: String) throws -> [[String: Any]] {
  try text.split(separator: "\n").map { try jsonObject(String($0)) }
}

/// A short two-session chat in the import format.
let sampleChat = """
  {"session": "trip", "speaker": "Maya", "role": "user", "timestamp": "2024-03-02T18:04:00Z", "content": "I booked a flight to Lisbon for May 20."}
  {"session": "trip", "speaker": "Leo", "role": "assistant", "timestamp": "2024-03-02T18:05:00Z", "content": "Great, I will meet you at the airport."}
  {"session": "trip", "speaker": "Maya", "role": "user", "timestamp": "2024-03-02T18:06:00Z", "content": "Thanks!"}
  {"session": "food", "speaker": "Leo", "role": "assistant", "timestamp": "2024-04-10T09:00:00Z", "content": "Remember that I am vegetarian when you pick restaurants."}
  {"session": "food", "speaker": "Maya", "role": "user", "timestamp": "2024-04-10T09:01:00Z", "content": "Noted, a vegetarian place in Alfama then."}

  """
