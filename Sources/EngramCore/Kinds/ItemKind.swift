/// What a stored item is: a conversation turn, a memory or a summary.
///
/// The one item kind every layer speaks: the store's rows, the vector index's tags, search
/// hits and exports all use it.
public enum ItemKind: String, Sendable, CaseIterable, Codable, Hashable {
  /// A turn of the conversation log (`messages`).
  case message
  /// A long-term memory (`memories`).
  case memory
  /// A structured summary of a session (`summaries`).
  case summary

  /// A small stable code (0, 1, 2): the tag the vector index stores and the low bits of a
  /// vector key. Never renumber.
  public var code: UInt8 {
    switch self {
    case .message: return 0
    case .memory: return 1
    case .summary: return 2
    }
  }

  /// The kind with this code, or nil.
  public init?(code: UInt8) {
    switch code {
    case 0: self = .message
    case 1: self = .memory
    case 2: self = .summary
    default: return nil
    }
  }
}
