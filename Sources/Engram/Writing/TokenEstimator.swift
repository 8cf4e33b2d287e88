import EngramCore

/// Rough token counts for budgets: about four bytes of Latin text per token, one token
/// per CJK character (what BPE and WordPiece tokenizers produce on average).
public enum TokenEstimator {
  /// The estimated token count of `text`.
  public static func estimate(_ text: String) -> Int {
    var cjk = 0
    var otherBytes = 0
    for scalar in text.unicodeScalars {
      if Tokenizer.isCJK(scalar.value) {
        cjk += 1
      } else {
        otherBytes += scalar.utf8.count
      }
    }
    return cjk + (otherBytes + 3) / 4
  }
}
