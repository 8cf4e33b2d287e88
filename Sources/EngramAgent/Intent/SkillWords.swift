/// The words the built-in skills strip from what they extract and match in requests (the
/// fillers around a reminder's title, the stop words of agenda targets, the cues of a place
/// name): data beside the intent corpus, in `skill-words.json`, which `make corpus` compiles
/// into `SkillWords+Generated.swift`. Read once per process, as the corpus is.
enum SkillWords {
  /// Every list by name, each in file order.
  static let lists: [String: [String]] = {
    var lists: [String: [String]] = [:]
    for line in generated.split(separator: "\n") {
      let fields = line.split(separator: "\t", maxSplits: 1, omittingEmptySubsequences: false)
      guard fields.count == 2, !fields[0].isEmpty, !fields[1].isEmpty else { continue }
      lists[String(fields[0]), default: []].append(String(fields[1]))
    }
    return lists
  }()

  /// The list `name` of `skill-words.json`.
  ///
  /// A name the file does not hold is a programming error (a test reads every name).
  static func list(_ name: String) -> [String] {
    guard let words = lists[name] else { preconditionFailure("skill-words.json has no list \(name)") }
    return words
  }
}
