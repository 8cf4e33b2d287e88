/// What `engram chat` writes of a reply while it streams in, so that a turn's output is still
/// the reply exactly once: the partial text is written as it grows, and at the end only the
/// rest of the reply (and the line break).
///
/// Partial text that is withdrawn or rewritten (a language model's reply that had to be asked
/// again) stops the streaming for that turn; the reply is then written on a line of its own.
/// With `folds` (standard input not a terminal) the text is folded onto one line the way the
/// reply is (`ChatRendering.folded`); folding a beginning of a text gives a beginning of the
/// folded text, so the pieces still add up to the folded reply.
struct PartialReplyPrinter {
  /// Whether replies are folded onto one line.
  let folds: Bool
  /// What was written of the current reply.
  private(set) var printed = ""
  private var stopped = false
  /// The partial line was ended by `interrupt`: the reply goes on a line of its own.
  private var detached = false

  init(folds: Bool) {
    self.folds = folds
  }

  /// Whether partial text of the current reply is on the screen (its line is not finished).
  var isShowing: Bool { !printed.isEmpty }

  /// The new piece to write for the partial text `text`, or nil when there is nothing new.
  mutating func update(_ text: String) -> String? {
    guard !stopped else { return nil }
    let shown = display(text)
    guard shown.unicodeScalars.starts(with: printed.unicodeScalars) else {
      // Withdrawn (empty) at the end of a turn is normal; anything else is a rewrite.
      if !shown.isEmpty { stopped = true }
      return nil
    }
    let piece = String(shown.unicodeScalars.dropFirst(printed.unicodeScalars.count))
    guard !piece.isEmpty else { return nil }
    printed = shown
    return piece
  }

  /// What to write to complete the turn with `reply`; starts over for the next reply.
  mutating func finish(_ reply: String) -> String {
    let shown = display(reply)
    defer { restart() }
    guard !printed.isEmpty, !detached else { return shown + "\n" }
    guard shown.unicodeScalars.starts(with: printed.unicodeScalars) else { return "\n" + shown + "\n" }
    return String(shown.unicodeScalars.dropFirst(printed.unicodeScalars.count)) + "\n"
  }

  /// Ends a partial line before something else is written (a confirmation question): the
  /// line break to write, and streaming stops until the reply.
  mutating func interrupt() -> String {
    guard !printed.isEmpty, !stopped else { return "" }
    stopped = true
    detached = true
    return "\n"
  }

  /// Forgets the current reply.
  mutating func restart() {
    printed = ""
    stopped = false
    detached = false
  }

  private func display(_ text: String) -> String {
    folds ? ChatRendering.folded(text) : text
  }
}
