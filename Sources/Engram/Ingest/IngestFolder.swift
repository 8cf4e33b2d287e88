import Foundation

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// What `ingest` reads when it is given a folder.
///
/// A folder is read inside itself only: a symbolic link is followed when its target (every
/// link on the way resolved) lies inside the folder, once (a link back to a folder on the way
/// is a loop, a second link to a file read already is skipped); a link whose target lies
/// outside is not opened, and the listing says so (`IngestWarning.linkOutsideFolder`).
public enum IngestFolder {
  /// What a folder stands for: the paths to ingest and the links left out.
  public struct Listing: Sendable, Equatable {
    /// The paths to ingest, in order (see `entries(_:format:)`).
    public var entries: [String]
    /// The links of the folder's exports that were not followed, each with its reason.
    public var warnings: [IngestWarning]
  }

  /// The paths to ingest for the folder `path`, in order: the folder itself when it holds
  /// Markdown notes (at any depth; they are read together), then each `.json`, `.jsonl` and
  /// `.txt` file directly in it, sorted by name (hidden files left out). With `format`
  /// `markdown` only the notes are read; with another format only the files.
  public static func entries(_ path: String, format: ConversationFile.Format? = nil) -> [String] {
    listing(path, format: format).entries
  }

  /// The paths to ingest for the folder `path` (as `entries(_:format:)`) and the links among
  /// its export files that were left out. Links among its notes are reported by the ingest
  /// of the notes (`IngestReport.warnings`).
  public static func listing(_ path: String, format: ConversationFile.Format? = nil) -> Listing {
    var listing = Listing(entries: [], warnings: [])
    let walked = walk(path)
    if format == nil || format == .markdown, !walked.notes.isEmpty { listing.entries.append(path) }
    guard format != .markdown else { return listing }
    listing.entries += walked.exports
    listing.warnings = walked.exportWarnings
    return listing
  }

  /// What a walk of a folder found.
  struct Walk {
    /// The note files at any depth, sorted by path.
    var notes: [String] = []
    /// The export files directly in the folder, sorted by name.
    var exports: [String] = []
    /// Links among the notes (and linked folders) left out.
    var noteWarnings: [IngestWarning] = []
    /// Links among the exports left out.
    var exportWarnings: [IngestWarning] = []
  }

  static func isNote(_ name: String) -> Bool {
    let lowered = name.lowercased()
    return lowered.hasSuffix(".md") || lowered.hasSuffix(".markdown")
  }

  static func isExport(_ name: String) -> Bool {
    let lowered = name.lowercased()
    return lowered.hasSuffix(".json") || lowered.hasSuffix(".jsonl") || lowered.hasSuffix(".txt")
  }

  /// Walks `folder` and its subfolders (hidden entries left out), following the links whose
  /// target lies inside it, each folder and file once.
  /// - Complexity: O(entries) of the folder's tree (each folder listed once).
  static func walk(_ folder: String) -> Walk {
    var result = Walk()
    guard let root = realPath(folder) else { return result }
    let inside = root == "/" ? "/" : root + "/"
    var seenFolders: Set<String> = [root]
    // Each file by its real path, with the path it was reached by: one not through a link
    // wins, then the first in path order.
    var notes: [String: (shown: String, linked: Bool)] = [:]
    var exports: [String: (shown: String, linked: Bool)] = [:]
    func keep(
      _ real: String, _ shown: String, _ linked: Bool, in files: inout [String: (shown: String, linked: Bool)]
    ) {
      if let held = files[real], (held.linked ? 1 : 0, held.shown) <= (linked ? 1 : 0, shown) { return }
      files[real] = (shown, linked)
    }
    // Folders to list (the path shown for them, their depth, whether reached through a
    // link); linked folders after every folder reached without one, so a link to a folder
    // of the tree is the one found again.
    var pending: [(shown: String, depth: Int, linked: Bool)] = [(folder, 0, false)]
    var pendingLinked: [(shown: String, depth: Int, linked: Bool)] = []
    while true {
      let current: String
      let depth: Int
      let throughLink: Bool
      if let next = pending.popLast() {
        (current, depth, throughLink) = next
      } else if !pendingLinked.isEmpty {
        // A linked folder is listed once no folder reached otherwise is left, and only once.
        let next = pendingLinked.removeFirst()
        let real = realPath(next.shown) ?? next.shown
        guard seenFolders.insert(real).inserted else {
          result.noteWarnings.append(.linkAlreadyRead(path: next.shown, target: real))
          continue
        }
        (current, depth, throughLink) = next
      } else {
        break
      }
      let names = ((try? FileManager.default.contentsOfDirectory(atPath: current)) ?? []).sorted()
      for name in names where !name.hasPrefix(".") {
        let shown = URL(fileURLWithPath: current).appendingPathComponent(name).path
        var status = stat()
        guard lstat(shown, &status) == 0 else { continue }
        let isLink = status.st_mode & S_IFMT == S_IFLNK
        // A broken link leads nowhere: nothing to read.
        guard let real = realPath(shown), stat(real, &status) == 0 else { continue }
        let kind = status.st_mode & S_IFMT
        let relevant =
          kind == S_IFDIR || (kind == S_IFREG && (isNote(name) || (depth == 0 && isExport(name))))
        guard relevant else { continue }
        guard real == root || real.hasPrefix(inside) else {
          let warning = IngestWarning.linkOutsideFolder(path: shown, target: real)
          if kind == S_IFREG && !isNote(name) {
            result.exportWarnings.append(warning)
          } else {
            result.noteWarnings.append(warning)
          }
          continue
        }
        let linked = throughLink || isLink
        if kind == S_IFDIR {
          if isLink {
            pendingLinked.append((shown, depth + 1, true))
          } else if seenFolders.insert(real).inserted {
            pending.append((shown, depth + 1, linked))
          }
        } else if isNote(name) {
          keep(real, shown, linked, in: &notes)
        } else {
          keep(real, shown, linked, in: &exports)
        }
      }
    }
    result.notes = notes.values.map(\.shown).sorted()
    result.exports = exports.values.map(\.shown).sorted()
    return result
  }

  /// The absolute path of `path` with every link and `..` resolved; nil when it does not exist.
  static func realPath(_ path: String) -> String? {
    guard let resolved = realpath(path, nil) else { return nil }
    defer { free(resolved) }
    return String(cString: resolved)
  }
}
