import Foundation

/// A value that cannot be written as JSON (a NaN or infinite number, say).
public struct JSONLinesError: Error, Sendable, CustomStringConvertible {
  /// What the encoder reported.
  public var reason: String

  /// One line for the user.
  public var description: String { "cannot write JSON: \(reason)" }
}

/// Writes one JSON object per line: keys sorted, no slashes escaped, newlines inside strings escaped.
public struct JSONLinesWriter: Sendable {
  /// Where lines go (standard output for `--json`).
  public let output: any TextOutput

  /// Creates a writer.
  public init(output: any TextOutput) {
    self.output = output
  }

  /// Writes `value` as one line.
  /// - Throws: ``JSONLinesError`` when the value has no JSON form; nothing is written then.
  public func write(_ value: some Encodable) throws(JSONLinesError) {
    output.write(try Self.line(for: value) + "\n")
  }

  /// The JSON text of `value` on one line, without the newline.
  /// - Throws: ``JSONLinesError`` when the value has no JSON form.
  public static func line(for value: some Encodable) throws(JSONLinesError) -> String {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
    encoder.dateEncodingStrategy = .iso8601
    do {
      let data = try encoder.encode(value)
      return String(decoding: data, as: UTF8.self)
    } catch {
      throw JSONLinesError(reason: String(describing: error))
    }
  }
}
