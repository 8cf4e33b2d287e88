import Foundation

/// Finds the texts of Swift's own rendering in a message meant for a person: an enum case
/// with its payload (`unexpectedCharacter(`), a labelled payload (`position:`), `Optional(`,
/// a type name (`SkillError`, `DecodingError(`), Foundation's error domains and codes
/// (`NSCocoaErrorDomain`, `error 256`), or SQLite's raw message (`SQLite error:`).
public enum SwiftInternals {
  /// The pieces of `text` that are Swift or Foundation internals, empty when it reads as a sentence.
  public static func find(in text: String) -> [String] {
    var found: [String] = []
    for pattern in patterns {
      // The patterns are constant and valid; a Regex is not Sendable, so each call builds its own.
      guard let regex = try? Regex(pattern) else { continue }
      for match in text.matches(of: regex) { found.append(String(text[match.range])) }
    }
    return found
  }

  private static let patterns = [
    // An enum case or initializer with its payload: lowerCamelCase (with a capital) then "(".
    #"\b[a-z][a-z0-9]*[A-Z][A-Za-z0-9]*\("#,
    // A type name ending in Error, Reason or Domain, or Optional(...).
    #"\b[A-Z][A-Za-z0-9]*(Error|Reason|Domain)\b"#,
    #"Optional\("#,
    // A labelled payload ("position: 0", "line: 3").
    #"\b[a-z][A-Za-z]*: [0-9]+\)"#,
    #"\bposition: "#,
    // Foundation's numbered errors and SQLite's raw text.
    #"\berror [0-9]{2,}\b"#,
    #"SQLite error:"#,
    #"\bSwift\.[A-Z]"#,
  ]
}
