import Foundation

/// A Markdown note read for ingest: one memory for the note, or one per heading section when
/// the note is long. Front matter's `date` becomes the memories' time and its `tags` their
/// tags; everything else (links, `[[wiki links]]`, code) is kept as text.
public struct NoteFile: Sendable, Equatable {
  /// One memory a note gives.
  public struct Memory: Sendable, Equatable {
    /// The memory's text.
    public var text: String
    /// When the note says it was written (front matter `date`), if it says.
    public var date: Date?
    /// The note's tags (front matter `tags`).
    public var tags: [String]
    /// The line of the note where the text starts.
    public var line: Int
  }

  /// The file read.
  public var path: String
  /// The note's memories, in order.
  public var memories: [Memory]

  /// Notes longer than this many characters are split at their `#` and `##` headings.
  public static let sectionThreshold = 2_000

  /// Whether a file looks like a Markdown note: a `.md` or `.markdown` name, front matter
  /// (`---`) or a heading on its first line.
  static func looksLikeMarkdown(firstLine: String, path: String) -> Bool {
    let lowered = path.lowercased()
    if lowered.hasSuffix(".md") || lowered.hasSuffix(".markdown") { return true }
    let trimmed = firstLine.trimmingCharacters(in: .whitespacesAndNewlines)
    return trimmed == "---" || trimmed.hasPrefix("# ")
  }

  /// Reads a note; `-` reads standard input.
  /// - Throws: `ImportError` naming the path and line.
  public static func read(path: String) throws(ImportError) -> NoteFile {
    try parse(try InputFile.readAll(path), path: path)
  }

  /// Parses a note.
  /// - Throws: `ImportError`: `.invalidUTF8`, `.malformed` (front matter not closed, a
  ///   `date` that is not a date) with its line. A note without text gives no memories.
  public static func parse(_ data: Data, path: String) throws(ImportError) -> NoteFile {
    guard var text = String(data: data, encoding: .utf8) else {
      throw .invalidUTF8(path: path, line: ConversationFile.firstInvalidUTF8Line(data))
    }
    if text.hasPrefix("\u{FEFF}") { text.removeFirst() }
    var lines = text.split(separator: "\n", omittingEmptySubsequences: false).map { line in
      line.hasSuffix("\r") ? line.dropLast() : line
    }
    var date: Date?
    var tags: [String] = []
    var bodyStart = 0
    if lines.first?.trimmingCharacters(in: .whitespaces) == "---" {
      guard
        let close = lines.indices.dropFirst().first(where: {
          ["---", "..."].contains(lines[$0].trimmingCharacters(in: .whitespaces))
        })
      else { throw .malformed(path: path, line: 1, reason: "the front matter (---) is not closed") }
      (date, tags) = try frontMatter(lines[1..<close], path: path)
      bodyStart = close + 1
    }
    lines = Array(lines[bodyStart...])
    let body = lines.joined(separator: "\n")
    guard !ConversationFile.isBlank(body) else { return NoteFile(path: path, memories: []) }
    var memories: [Memory] = []
    if body.count <= sectionThreshold {
      let first = lines.firstIndex { !ConversationFile.isBlank(String($0)) } ?? 0
      memories.append(Memory(text: trimmed(body), date: date, tags: tags, line: bodyStart + first + 1))
    } else {
      let title =
        lines.lazy.compactMap { Self.heading($0, levels: 1...1) }.first
        ?? URL(fileURLWithPath: path).deletingPathExtension().lastPathComponent
      for section in sections(lines) {
        var sectionText = trimmed(section.lines.joined(separator: "\n"))
        guard !ConversationFile.isBlank(sectionText) else { continue }
        // A section keeps the note's title, so it still says what it belongs to.
        if Self.heading(section.lines.first { !ConversationFile.isBlank(String($0)) } ?? "", levels: 1...1)
          == nil
        {
          sectionText = "# \(title)\n\n" + sectionText
        }
        memories.append(
          Memory(text: sectionText, date: date, tags: tags, line: bodyStart + section.start + 1))
      }
    }
    return NoteFile(path: path, memories: memories)
  }

  /// The text of a heading line of one of `levels` (`# Title` → `Title`), or nil.
  static func heading(_ line: Substring, levels: ClosedRange<Int>) -> String? {
    let hashes = line.prefix { $0 == "#" }.count
    guard levels.contains(hashes), line.dropFirst(hashes).first == " " else { return nil }
    return line.dropFirst(hashes + 1).trimmingCharacters(in: .whitespaces)
  }

  /// The note's lines cut before each `#` or `##` heading outside fenced code.
  static func sections(_ lines: [Substring]) -> [(start: Int, lines: ArraySlice<Substring>)] {
    var cuts = [0]
    var inFence = false
    for (index, line) in lines.enumerated() {
      let trimmed = line.trimmingCharacters(in: .whitespaces)
      if trimmed.hasPrefix("```") || trimmed.hasPrefix("~~~") { inFence.toggle() }
      if !inFence, index > 0, heading(line, levels: 1...2) != nil { cuts.append(index) }
    }
    cuts.append(lines.count)
    return zip(cuts, cuts.dropFirst()).map { ($0, lines[$0..<$1]) }
  }

  static func trimmed(_ text: String) -> String {
    text.trimmingCharacters(in: .whitespacesAndNewlines)
  }

  /// The `date` and `tags` of front matter (a small YAML subset: `key: value`, lists as
  /// `[a, b]`, `a, b` or `- a` lines). Other keys are ignored.
  static func frontMatter(_ lines: ArraySlice<Substring>, path: String) throws(ImportError)
    -> (date: Date?, tags: [String])
  {
    var date: Date?
    var tags: [String] = []
    var listKey: String?
    for index in lines.indices {
      let line = lines[index]
      let trimmedLine = line.trimmingCharacters(in: .whitespaces)
      if trimmedLine.hasPrefix("- "), listKey == "tags" {
        tags.append(contentsOf: tagList(String(trimmedLine.dropFirst(2))))
        continue
      }
      guard let colon = line.firstIndex(of: ":"), line.first?.isWhitespace == false else {
        listKey = nil
        continue
      }
      let key = line[..<colon].trimmingCharacters(in: .whitespaces).lowercased()
      let value = unquoted(line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces))
      listKey = value.isEmpty ? key : nil
      switch key {
      case "date", "created":
        guard date == nil || key == "date", !value.isEmpty else { continue }
        guard let parsed = DateParser.fileTimestamp(value) else {
          throw .malformed(
            path: path, line: index + 1,
            reason: "front matter '\(key)' is not a date (YYYY-MM-DD or ISO 8601): \(value)")
        }
        date = parsed
      case "tags", "tag":
        tags.append(contentsOf: tagList(value))
      default: break
      }
    }
    var seen: Set<String> = []
    return (date, tags.filter { seen.insert($0).inserted })
  }

  /// Tags from `[a, b]`, `a, b`, `a b` or `#a`.
  static func tagList(_ text: String) -> [String] {
    var inner = Substring(text)
    if inner.hasPrefix("["), inner.hasSuffix("]") { inner = inner.dropFirst().dropLast() }
    return inner.split(whereSeparator: { $0 == "," || $0 == " " }).map { unquoted(String($0)) }
      .map { $0.hasPrefix("#") ? String($0.dropFirst()) : $0 }.filter { !$0.isEmpty }
  }

  static func unquoted(_ text: String) -> String {
    let trimmed = text.trimmingCharacters(in: .whitespaces)
    if trimmed.count >= 2, let first = trimmed.first, first == "\"" || first == "'", trimmed.last == first {
      return String(trimmed.dropFirst().dropLast())
    }
    return trimmed
  }
}

/// The notes of a folder: every `.md` and `.markdown` file in it and its subfolders (hidden
/// ones, such as `.obsidian` or `.git`, left out), in path order. The walk never leaves the
/// folder: a symbolic link whose target lies outside it is not followed (`IngestFolder.walk`).
public enum NoteFolder {
  /// The note files under `folder`, sorted by path.
  public static func files(in folder: String) -> [String] {
    IngestFolder.walk(folder).notes
  }
}
