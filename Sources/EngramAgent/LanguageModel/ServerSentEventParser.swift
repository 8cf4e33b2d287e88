import Foundation

/// Splits a `text/event-stream` body into events as its bytes arrive, in chunks of any size.
///
/// Lines end with LF, CRLF or CR (a CRLF split across two chunks counts once). A line is
/// decoded only when it is complete, so a UTF-8 character split across chunks is never cut.
/// Lines starting with `:` are comments; `data:` lines accumulate (joined by LF) until a blank
/// line dispatches the event; other fields (`event`, `id`, `retry`) are ignored.
struct ServerSentEventParser {
  private var line: [UInt8] = []
  private var data: [String] = []
  private var hasData = false
  private var afterCR = false

  /// The `data` of every event completed by `bytes`, in order.
  mutating func feed(_ bytes: some Sequence<UInt8>) -> [String] {
    var events: [String] = []
    for byte in bytes {
      if afterCR {
        afterCR = false
        if byte == UInt8(ascii: "\n") { continue }
      }
      switch byte {
      case UInt8(ascii: "\n"):
        endLine(into: &events)
      case UInt8(ascii: "\r"):
        afterCR = true
        endLine(into: &events)
      default:
        line.append(byte)
      }
    }
    return events
  }

  /// The event left without its closing blank line when the body ended, if it had data.
  mutating func finish() -> [String] {
    var events: [String] = []
    if !line.isEmpty { endLine(into: &events) }
    if hasData { dispatch(into: &events) }
    return events
  }

  private mutating func endLine(into events: inout [String]) {
    defer { line.removeAll(keepingCapacity: true) }
    guard !line.isEmpty else {
      if hasData { dispatch(into: &events) }
      return
    }
    if line[0] == UInt8(ascii: ":") { return }
    let text = String(decoding: line, as: UTF8.self)
    let field: Substring
    var value: Substring
    if let colon = text.firstIndex(of: ":") {
      field = text[..<colon]
      value = text[text.index(after: colon)...]
      if value.first == " " { value = value.dropFirst() }
    } else {
      field = text[...]
      value = ""
    }
    if field == "data" {
      data.append(String(value))
      hasData = true
    }
  }

  private mutating func dispatch(into events: inout [String]) {
    events.append(data.joined(separator: "\n"))
    data.removeAll()
    hasData = false
  }
}

/// Reads the events of an OpenAI-compatible chat-completion stream: text deltas from
/// `choices[0].delta.content`, the end at `[DONE]` (or a finish reason), errors as typed errors.
struct ChatCompletionStreamDecoder {
  /// `[DONE]` arrived, or a chunk carried a `finish_reason`.
  private(set) var isComplete = false
  /// The text received so far.
  private(set) var received = ""

  private struct Chunk: Decodable {
    struct Choice: Decodable {
      struct Delta: Decodable { var content: String? }
      var delta: Delta?
      var finish_reason: String?
    }
    var choices: [Choice]?
  }

  /// The text delta in one event's data, or nil when it carries none.
  /// - Throws: `LanguageModelError.serverError` for an error object,
  ///   `.malformedResponse` for data that is neither JSON nor `[DONE]`.
  mutating func delta(in data: String) throws(LanguageModelError) -> String? {
    let trimmed = data.trimmingCharacters(in: .whitespaces)
    if trimmed == "[DONE]" {
      isComplete = true
      return nil
    }
    if trimmed.isEmpty { return nil }
    let bytes = Data(trimmed.utf8)
    if let message = Self.errorMessage(in: bytes) { throw .serverError(message: message) }
    let chunk: Chunk
    do {
      chunk = try JSONDecoder().decode(Chunk.self, from: bytes)
    } catch {
      throw .malformedResponse(
        reason: "a stream event is not a chat-completion chunk: \(trimmed.prefix(200))")
    }
    guard let choice = chunk.choices?.first else { return nil }
    if choice.finish_reason != nil { isComplete = true }
    guard let content = choice.delta?.content, !content.isEmpty else { return nil }
    received += content
    return content
  }

  /// The message of an `{"error": …}` object (OpenAI, Ollama and llama.cpp shapes), or nil.
  static func errorMessage(in body: Data) -> String? {
    guard let object = try? JSONSerialization.jsonObject(with: body) as? [String: Any],
      let error = object["error"]
    else { return nil }
    if let text = error as? String { return text }
    if let nested = error as? [String: Any] {
      if let message = nested["message"] as? String { return message }
      if let data = try? JSONSerialization.data(withJSONObject: nested, options: [.sortedKeys]) {
        return String(decoding: data, as: UTF8.self)
      }
    }
    return String(describing: error)
  }
}
