import Foundation

/// A benchmark failure a person can act on (bad option, missing data).
struct BenchError: Error, CustomStringConvertible {
  var description: String
  init(_ description: String) { self.description = description }
}

/// The non-blank lines of a JSON Lines file, each decoded as `T`; at least one. A line that
/// does not decode is an error naming the file and the line.
func decodeJSONLines<T: Decodable>(_ type: T.Type, path: String) throws -> [T] {
  let text = try String(contentsOfFile: path, encoding: .utf8)
  var items: [T] = []
  for (number, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated()
  where !line.trimmingCharacters(in: .whitespaces).isEmpty {
    do {
      items.append(try JSONDecoder().decode(T.self, from: Data(line.utf8)))
    } catch {
      throw BenchError("\(path):\(number + 1): \(error)")
    }
  }
  guard !items.isEmpty else { throw BenchError("no items in \(path)") }
  return items
}

/// `--key value` options and `--flag` switches of one suite, parsed once.
///
/// Every option a suite reads is marked used; `finish()` rejects the rest, so a typo
/// is an error instead of a silently ignored setting.
struct BenchArguments {
  private var values: [String: String] = [:]
  private var flags: Set<String> = []
  private var used: Set<String> = []

  /// Switches that never take a value.
  static let knownFlags: Set<String> = [
    "reuse", "json", "quick", "cross-validate", "calibrate", "sweep", "one-session", "source-keys",
  ]

  init(_ arguments: [String]) throws {
    var index = 0
    while index < arguments.count {
      let argument = arguments[index]
      guard argument.hasPrefix("--") else { throw BenchError("unexpected argument '\(argument)'") }
      var name = String(argument.dropFirst(2))
      if let equals = name.firstIndex(of: "=") {
        values[String(name[..<equals])] = String(name[name.index(after: equals)...])
        name = String(name[..<equals])
      } else if Self.knownFlags.contains(name) {
        flags.insert(name)
      } else {
        guard index + 1 < arguments.count else { throw BenchError("option --\(name) needs a value") }
        values[name] = arguments[index + 1]
        index += 1
      }
      index += 1
    }
  }

  /// Whether the switch `--name` was given.
  mutating func flag(_ name: String) -> Bool {
    used.insert(name)
    return flags.contains(name)
  }

  /// The string value of `--name`, or `defaultValue`.
  mutating func string(_ name: String, default defaultValue: String) -> String {
    used.insert(name)
    return values[name] ?? defaultValue
  }

  /// The optional string value of `--name`.
  mutating func optionalString(_ name: String) -> String? {
    used.insert(name)
    return values[name]
  }

  /// The integer value of `--name`, or `defaultValue`.
  mutating func int(_ name: String, default defaultValue: Int) throws -> Int {
    used.insert(name)
    guard let raw = values[name] else { return defaultValue }
    guard let value = Int(raw.replacingOccurrences(of: "_", with: "")) else {
      throw BenchError("--\(name) expects an integer, got '\(raw)'")
    }
    return value
  }

  /// The floating-point value of `--name`, or `defaultValue`.
  mutating func double(_ name: String, default defaultValue: Double?) throws -> Double? {
    used.insert(name)
    guard let raw = values[name] else { return defaultValue }
    guard let value = Double(raw) else { throw BenchError("--\(name) expects a number, got '\(raw)'") }
    return value
  }

  /// Rejects options no one read.
  func finish() throws {
    let unknown = Set(values.keys).union(flags).subtracting(used).sorted()
    if !unknown.isEmpty {
      throw BenchError("unknown option(s): " + unknown.map { "--\($0)" }.joined(separator: ", "))
    }
  }
}

/// Ordered key/value results of one suite, printed as a table or as one JSON object.
struct BenchReport: Sendable {
  /// A JSON-representable value.
  indirect enum Value: Sendable {
    case int(Int)
    case double(Double)
    case string(String)
    case bool(Bool)
    case object(BenchReport)
    case array([Value])
    case null

    var json: String {
      switch self {
      case .int(let value): return String(value)
      case .double(let value):
        guard value.isFinite else { return "null" }
        return String(format: "%.6g", value)
      case .string(let value): return BenchReport.quote(value)
      case .bool(let value): return value ? "true" : "false"
      case .object(let report): return report.json
      case .array(let values): return "[" + values.map(\.json).joined(separator: ",") + "]"
      case .null: return "null"
      }
    }

    var text: String {
      switch self {
      case .double(let value):
        if value == 0 { return "0" }
        return abs(value) >= 100 ? String(format: "%.1f", value) : String(format: "%.4g", value)
      case .string(let value): return value
      case .object: return "{…}"
      default: return json
      }
    }
  }

  private(set) var entries: [(key: String, value: Value)] = []

  subscript(key: String) -> Value? {
    get { entries.first { $0.key == key }?.value }
    set {
      if let index = entries.firstIndex(where: { $0.key == key }) {
        if let newValue { entries[index].value = newValue } else { entries.remove(at: index) }
      } else if let newValue {
        entries.append((key, newValue))
      }
    }
  }

  mutating func set(_ key: String, _ value: Int) { self[key] = .int(value) }
  mutating func set(_ key: String, _ value: Double) { self[key] = .double(value) }
  mutating func set(_ key: String, _ value: String) { self[key] = .string(value) }
  mutating func set(_ key: String, _ value: Bool) { self[key] = .bool(value) }
  mutating func set(_ key: String, _ value: BenchReport) { self[key] = .object(value) }

  /// One JSON object; keys in insertion order.
  var json: String {
    "{" + entries.map { BenchReport.quote($0.key) + ":" + $0.value.json }.joined(separator: ",") + "}"
  }

  /// A two-column table; nested objects are flattened with dotted keys.
  func table(prefix: String = "") -> [(String, String)] {
    var rows: [(String, String)] = []
    for (key, value) in entries {
      if case .object(let nested) = value {
        rows += nested.table(prefix: prefix + key + ".")
      } else {
        rows.append((prefix + key, value.text))
      }
    }
    return rows
  }

  static func quote(_ string: String) -> String {
    var out = "\""
    for scalar in string.unicodeScalars {
      switch scalar {
      case "\"": out += "\\\""
      case "\\": out += "\\\\"
      case "\n": out += "\\n"
      case "\r": out += "\\r"
      case "\t": out += "\\t"
      case _ where scalar.value < 0x20: out += String(format: "\\u%04x", scalar.value)
      default: out.unicodeScalars.append(scalar)
      }
    }
    return out + "\""
  }
}

/// Timing and summary statistics.
enum Measure {
  /// Seconds taken by `body`.
  static func seconds(_ body: () throws -> Void) rethrows -> Double {
    let start = ContinuousClock.now
    try body()
    return (ContinuousClock.now - start).seconds
  }

  /// Seconds taken by the async `body`.
  static func seconds(_ body: () async throws -> Void) async rethrows -> Double {
    let start = ContinuousClock.now
    try await body()
    return (ContinuousClock.now - start).seconds
  }

  /// The `q`-quantile (0...1) of `samples` by linear interpolation (numpy's default).
  static func percentile(_ samples: [Double], _ q: Double) -> Double {
    guard !samples.isEmpty else { return .nan }
    let sorted = samples.sorted()
    let position = q * Double(sorted.count - 1)
    let lower = Int(position.rounded(.down))
    let upper = min(lower + 1, sorted.count - 1)
    let fraction = position - Double(lower)
    return sorted[lower] + (sorted[upper] - sorted[lower]) * fraction
  }

  /// Peak resident set size of this process in bytes (Linux `VmHWM`), or nil elsewhere.
  static func peakResidentBytes() -> Int? {
    guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return nil }
    for line in status.split(separator: "\n") where line.hasPrefix("VmHWM:") {
      let digits = line.split(separator: " ").compactMap { Int($0) }
      if let kilobytes = digits.first { return kilobytes * 1024 }
    }
    return nil
  }
}

extension Duration {
  /// This duration in seconds.
  var seconds: Double {
    let (seconds, attoseconds) = components
    return Double(seconds) + Double(attoseconds) * 1e-18
  }
}

/// Prints a report as a table on stdout, or as one JSON object with `--json`.
func emit(_ report: BenchReport, title: String, json: Bool) {
  if json {
    print(report.json)
    return
  }
  print(title)
  let rows = report.table()
  let width = rows.map(\.0.count).max() ?? 0
  for (key, value) in rows {
    print("  " + key.padding(toLength: width, withPad: " ", startingAt: 0) + "  " + value)
  }
}

/// `part` over `whole`, as a report number (0 when there is nothing).
func ratio(_ part: Int, _ whole: Int) -> Double {
  whole == 0 ? 0 : Double(part) / Double(whole)
}

/// Writes a progress line to stderr (never stdout, which carries results).
func progress(_ message: String) {
  FileHandle.standardError.write(Data((message + "\n").utf8))
}
