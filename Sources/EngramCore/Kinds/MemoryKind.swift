/// What a memory records. The one memory kind: the store's `memories.kind` column, the
/// engine's API, the agent's skills and MCP all use it.
public enum MemoryKind: String, Sendable, Hashable, CaseIterable, Codable {
  /// A fact about the person or the world.
  case fact
  /// Something the person likes or wants.
  case preference
  /// A free note.
  case note
  /// A summary promoted to memory.
  case summary
  /// Something that happened, or will happen, at a time.
  case event
}
