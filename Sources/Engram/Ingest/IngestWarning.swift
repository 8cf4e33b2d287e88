import Foundation

/// Something an ingest left out of a file or folder and says so: the file was still read,
/// and the rest of it stored. The CLI prints each one as a line.
public enum IngestWarning: Error, Sendable, Equatable {
  /// How a dangling reference names the node the export does not hold.
  public enum Relation: String, Sendable, Equatable {
    /// A node lists it among its children.
    case child
    /// A node names it as its parent: the branch starts at that node.
    case parent
    /// The conversation's `current_node` names it: the branch ending at the latest message is read.
    case currentNode = "current node"
  }

  /// A ChatGPT conversation refers to a node its `mapping` does not hold (`node`: the node that
  /// names it, nil for the conversation's `current_node`). The reference is skipped; the
  /// turns the mapping holds are read.
  case danglingNode(
    path: String, conversation: Int, session: String, node: String?, reference: String, relation: Relation)
  /// A symbolic link in an ingested folder whose target lies outside the folder: not read.
  case linkOutsideFolder(path: String, target: String)
  /// A symbolic link in an ingested folder that leads back to a folder already read (a loop)
  /// or to a file already read: read once.
  case linkAlreadyRead(path: String, target: String)
}

extension IngestWarning: CustomStringConvertible {
  public var description: String {
    switch self {
    case .danglingNode(let path, let conversation, let session, let node, let reference, let relation):
      let holder =
        node.map { "node \($0) names \(reference) as its \(relation.rawValue)" }
        ?? "its current node \(reference) is named"
      return
        "\(path): conversation \(conversation) (\(session)): \(holder), but the mapping does not hold it; "
        + "that reference was skipped"
    case .linkOutsideFolder(let path, let target):
      return "skipped \(path): a link to \(target), outside the folder"
    case .linkAlreadyRead(let path, let target):
      return "skipped \(path): a link to \(target), read already"
    }
  }
}
