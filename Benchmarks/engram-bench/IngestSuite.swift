import Engram
import Foundation

/// `engram-bench ingest [--n 100000] [--model hashing:384|minilm] [--formats jsonl,chatgpt,...]
/// [--dir D]`
///
/// Ingest as a user runs it: for each format, an export of `--n` messages is generated
/// (sessions of 100 messages; Markdown: `--n / 10` notes), a new memory is made with
/// `engram init`, and the built `engram` binary ingests the export twice, one process each:
/// the first stores it (turns/s, peak resident memory of the process), the second finds
/// every turn stored and skips it (`skip_speedup` = first time / second time; goal ≥ 20).
/// Peak memory is the child's `ru_maxrss`; an ingest that read the export whole would show
/// several times the export's size.
enum IngestSuite {
  static let allFormats = ["jsonl", "chatgpt", "claude", "whatsapp", "telegram", "markdown"]

  static func run(_ arguments: inout BenchArguments) async throws -> (BenchReport, String) {
    let n = try arguments.int("n", default: 100_000)
    let model = arguments.string("model", default: "hashing:384")
    let formats = arguments.string("formats", default: allFormats.joined(separator: ",")).split(
      separator: ","
    )
    .map(String.init)
    let folderOption = arguments.optionalString("dir")
    try arguments.finish()
    guard n >= 100 else { throw BenchError("--n must be at least 100") }
    let unknown = Set(formats).subtracting(allFormats)
    guard unknown.isEmpty else { throw BenchError("--formats takes \(allFormats.joined(separator: ","))") }
    let binary = try ScaleSuite.engramBinary()
    let folder =
      folderOption.map { URL(fileURLWithPath: $0) }
      ?? FileManager.default.temporaryDirectory.appendingPathComponent(
        "engram-bench-ingest-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    defer { if folderOption == nil { try? FileManager.default.removeItem(at: folder) } }

    var report = BenchReport()
    report.set("n", n)
    report.set("model", model)
    for format in formats {
      progress("ingest: generating a \(format) export of \(n) messages")
      let export = folder.appendingPathComponent("export-\(format)" + (format == "markdown" ? "" : ".data"))
      let units = try generate(format, count: n, at: export)
      let bytes = try exportSize(export)
      let database = folder.appendingPathComponent("\(format).sqlite").path
      try? FileManager.default.removeItem(atPath: database)
      _ = try ScaleSuite.child(binary, ["init", "--db", database, "--model", model], in: folder)
      progress("ingest: \(format), first ingest")
      let first = try ScaleSuite.child(
        binary, ["ingest", "--db", database, "--format", format, export.path], in: folder)
      progress("ingest: \(format), the same export again")
      let second = try ScaleSuite.child(
        binary, ["ingest", "--db", database, "--format", format, export.path], in: folder)
      var entry = BenchReport()
      entry.set("units", units)
      entry.set("export_mb", Double(bytes) / 1_048_576)
      entry.set("ingest_s", first.seconds)
      entry.set("units_per_s", Double(units) / first.seconds)
      entry.set("peak_mb", Double(first.peakBytes) / 1_048_576)
      entry.set("skip_s", second.seconds)
      entry.set("skip_peak_mb", Double(second.peakBytes) / 1_048_576)
      entry.set("skip_speedup", first.seconds / max(second.seconds, 1e-9))
      report.set(format, entry)
      try? FileManager.default.removeItem(at: export)
    }
    report.set("peak_floor_mb", Double(Measure.peakResidentBytes() ?? 0) / 1_048_576)
    return (report, "ingest of generated exports, \(n) messages each (\(model))")
  }

  static func exportSize(_ url: URL) throws -> Int {
    var isDirectory: ObjCBool = false
    guard FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory) else { return 0 }
    guard isDirectory.boolValue else {
      return (try FileManager.default.attributesOfItem(atPath: url.path)[.size] as? Int) ?? 0
    }
    let files = try FileManager.default.contentsOfDirectory(atPath: url.path)
    return try files.reduce(0) { total, name in
      total
        + ((try FileManager.default.attributesOfItem(atPath: url.appendingPathComponent(name).path)[.size]
          as? Int) ?? 0)
    }
  }

  // MARK: - Generated exports

  static let words = [
    "lake", "hiking", "dinner", "Lisbon", "meeting", "book", "garden", "bike", "concert", "recipe", "train",
    "museum", "weekend", "project", "coffee", "sister", "birthday", "flight", "ramen", "painting",
  ]

  /// The text of message `index`: a dozen words, varied.
  static func text(_ index: Int) -> String {
    var generator = SplitMix64(seed: UInt64(index) &+ 17)
    let count = 8 + Int(generator.next() % 10)
    return (0..<count).map { _ in words[Int(generator.next() % UInt64(words.count))] }.joined(separator: " ")
      + " #\(index)"
  }

  static let start = Date(timeIntervalSince1970: 1_672_531_200)

  static func iso(_ date: Date) -> String {
    let formatter = ISO8601DateFormatter()
    formatter.formatOptions = [.withInternetDateTime]
    return formatter.string(from: date)
  }

  /// Writes an export of `count` messages in `format` at `url`; returns how many units (turns,
  /// or notes for Markdown) it holds.
  static func generate(_ format: String, count: Int, at url: URL) throws -> Int {
    let sessions = stride(from: 0, to: count, by: 100).map { $0..<min($0 + 100, count) }
    func time(_ index: Int) -> Date { start.addingTimeInterval(Double(index) * 90) }
    func speaker(_ index: Int) -> String { index % 2 == 0 ? "Ann" : "Ben" }
    _ = FileManager.default.createFile(atPath: url.path, contents: nil)
    var output = ""
    func flush(_ handle: FileHandle) {
      handle.write(Data(output.utf8))
      output.removeAll(keepingCapacity: true)
    }
    switch format {
    case "markdown":
      try? FileManager.default.removeItem(at: url)
      try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
      let notes = max(1, count / 10)
      for note in 0..<notes {
        let body = (0..<5).map { text(note * 5 + $0) }.joined(separator: "\n\n")
        let contents =
          "---\ndate: \(iso(time(note)).prefix(10))\ntags: [bench]\n---\n# Note \(note)\n\n\(body)\n"
        try contents.write(
          to: url.appendingPathComponent("note-\(note).md"), atomically: false, encoding: .utf8)
      }
      return notes
    default:
      break
    }
    let handle = try FileHandle(forWritingTo: url)
    defer { try? handle.close() }
    func json(_ value: Any) throws -> String {
      String(
        decoding: try JSONSerialization.data(withJSONObject: value, options: [.sortedKeys]), as: UTF8.self)
    }
    switch format {
    case "jsonl":
      for (number, range) in sessions.enumerated() {
        for index in range {
          output +=
            try json([
              "role": index % 2 == 0 ? "user" : "assistant", "content": text(index), "session": "s\(number)",
              "speaker": speaker(index), "timestamp": iso(time(index)),
            ]) + "\n"
        }
        flush(handle)
      }
    case "chatgpt":
      output += "["
      for (number, range) in sessions.enumerated() {
        var mapping: [String: Any] = [
          "root": [
            "id": "root", "message": NSNull(), "parent": NSNull(), "children": ["n\(range.lowerBound)"],
          ]
        ]
        for index in range {
          let id = "n\(index)"
          mapping[id] = [
            "id": id, "parent": index == range.lowerBound ? "root" : "n\(index - 1)",
            "children": index + 1 < range.upperBound ? ["n\(index + 1)"] : [],
            "message": [
              "id": id, "author": ["role": index % 2 == 0 ? "user" : "assistant"],
              "create_time": time(index).timeIntervalSince1970,
              "content": ["content_type": "text", "parts": [text(index)]],
            ],
          ]
        }
        let conversation: [String: Any] = [
          "title": "Conversation \(number)", "create_time": time(range.lowerBound).timeIntervalSince1970,
          "mapping": mapping, "current_node": "n\(range.upperBound - 1)", "id": "c\(number)",
        ]
        output += (number == 0 ? "" : ",") + (try json(conversation))
        flush(handle)
      }
      output += "]"
      flush(handle)
    case "claude":
      output += "["
      for (number, range) in sessions.enumerated() {
        let conversation: [String: Any] = [
          "uuid": "c\(number)", "name": "Conversation \(number)", "created_at": iso(time(range.lowerBound)),
          "chat_messages": range.map { index in
            [
              "uuid": "m\(index)", "sender": index % 2 == 0 ? "human" : "assistant", "text": text(index),
              "created_at": iso(time(index)),
            ]
          },
        ]
        output += (number == 0 ? "" : ",") + (try json(conversation))
        flush(handle)
      }
      output += "]"
      flush(handle)
    case "whatsapp":
      var calendar = Calendar(identifier: .gregorian)
      calendar.timeZone = TimeZone(identifier: "UTC")!
      for index in 0..<count {
        let parts = calendar.dateComponents(
          [.year, .month, .day, .hour, .minute, .second], from: time(index))
        output +=
          String(
            format: "[%02d/%02d/%02d, %02d:%02d:%02d] ", parts.day!, parts.month!, parts.year! % 100,
            parts.hour!,
            parts.minute!, parts.second!) + "\(speaker(index)): \(text(index))\n"
        if index % 1000 == 999 { flush(handle) }
      }
      flush(handle)
    case "telegram":
      output += #"{"chats":{"list":["#
      for (number, range) in sessions.enumerated() {
        let chat: [String: Any] = [
          "name": "Chat \(number)", "type": "personal_chat", "id": number,
          "messages": range.map { index in
            [
              "id": index, "type": "message", "date": String(iso(time(index)).dropLast()),
              "date_unixtime": String(Int(time(index).timeIntervalSince1970)), "from": speaker(index),
              "from_id": "user\(index % 2)", "text": text(index),
            ] as [String: Any]
          },
        ]
        output += (number == 0 ? "" : ",") + (try json(chat))
        flush(handle)
      }
      output += "]}}"
      flush(handle)
    default:
      throw BenchError("unknown format \(format)")
    }
    return count
  }
}
