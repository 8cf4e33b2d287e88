/// Words with a value each, kept as data beside the code that reads them: the calculator's
/// operator and number words (`BuiltIn/arithmetic-words.json`) and the date parser's
/// weekday, month and relative-day words (`Time/date-words.json`), each a JSON object of
/// lists of `["word", "value"]` pairs that `make corpus` compiles into a literal
/// (`ArithmeticWords+Generated.swift`, `DateWords+Generated.swift`). What a value means is
/// the reader's business (a number, an operator, a day offset). Read once per process.
struct WordTable: Sendable {
  /// One word and its value, as the data file writes them.
  struct Entry: Sendable, Equatable {
    var word: String
    var value: String
  }

  /// Every list by name, each in file order.
  let lists: [String: [Entry]]

  /// The table of a generated literal of "name<TAB>word<TAB>value" lines.
  init(lines: String) {
    var lists: [String: [Entry]] = [:]
    for line in lines.split(separator: "\n") {
      let fields = line.split(separator: "\t", maxSplits: 2, omittingEmptySubsequences: false)
      guard fields.count == 3, !fields[0].isEmpty, !fields[1].isEmpty else { continue }
      lists[String(fields[0]), default: []].append(Entry(word: String(fields[1]), value: String(fields[2])))
    }
    self.lists = lists
  }

  /// The list `name`.
  ///
  /// A name the file does not hold is a programming error (a test reads every name).
  func list(_ name: String) -> [Entry] {
    guard let entries = lists[name] else { preconditionFailure("no word list \(name)") }
    return entries
  }

  /// The list `name` as a map from word to value (a later duplicate word wins).
  func map(_ name: String) -> [String: String] {
    Dictionary(list(name).map { ($0.word, $0.value) }, uniquingKeysWith: { _, last in last })
  }

  /// The calculator's words (`BuiltIn/arithmetic-words.json`).
  static let arithmetic = WordTable(lines: arithmeticLines)
  /// The date parser's words (`Time/date-words.json`).
  static let dates = WordTable(lines: dateLines)
}
