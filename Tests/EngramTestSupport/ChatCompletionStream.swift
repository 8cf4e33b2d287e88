import Foundation

/// Bodies an OpenAI-compatible server sends for `"stream": true`: server-sent events with
/// `choices[0].delta.content`, ended by `data: [DONE]`.
public enum ChatCompletionStream {
  /// One `data:` event carrying `delta` (JSON-escaped), and a blank line.
  public static func event(_ delta: String) -> String {
    let chunk: [String: Any] = [
      "id": "chatcmpl-test", "object": "chat.completion.chunk", "model": "m",
      "choices": [["index": 0, "delta": ["content": delta], "finish_reason": NSNull()]],
    ]
    return "data: " + json(chunk) + "\n\n"
  }

  /// The first event real servers send: the role and no content.
  public static let roleEvent =
    "data: " + json(["choices": [["index": 0, "delta": ["role": "assistant"], "finish_reason": NSNull()]]])
    + "\n\n"

  /// The last chunk (a finish reason, no content).
  public static let finishEvent =
    "data: " + json(["choices": [["index": 0, "delta": [String: String](), "finish_reason": "stop"]]])
    + "\n\n"

  /// The end of the stream.
  public static let done = "data: [DONE]\n\n"

  /// A comment line (servers send them to keep the connection open).
  public static let keepAlive = ": keep-alive\n\n"

  /// A whole stream: the role event, one event per delta (with a comment after the first),
  /// the finish chunk and `[DONE]`.
  public static func body(_ deltas: [String]) -> String {
    var text = roleEvent
    for (index, delta) in deltas.enumerated() {
      text += event(delta)
      if index == 0 { text += keepAlive }
    }
    return text + finishEvent + done
  }

  /// `text` as UTF-8 cut into pieces of `size` bytes (pieces may end inside a character).
  public static func pieces(_ text: String, size: Int) -> [[UInt8]] {
    let bytes = Array(text.utf8)
    return stride(from: 0, to: bytes.count, by: size).map { Array(bytes[$0..<min($0 + size, bytes.count)]) }
  }

  /// `text` as UTF-8 cut at the byte offsets `cuts` (ascending).
  public static func pieces(_ text: String, cuttingAt cuts: [Int]) -> [[UInt8]] {
    let bytes = Array(text.utf8)
    var result: [[UInt8]] = []
    var start = 0
    for cut in cuts + [bytes.count] where cut > start {
      result.append(Array(bytes[start..<min(cut, bytes.count)]))
      start = cut
    }
    return result
  }

  private static func json(_ object: Any) -> String {
    let data = try! JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])
    return String(decoding: data, as: UTF8.self)
  }
}
