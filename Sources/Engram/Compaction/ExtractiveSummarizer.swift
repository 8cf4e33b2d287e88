import EngramCore
import Foundation

/// A structured summary of a span of conversation, per `schemas/structured-summary.schema.json`.
public struct StructuredSummary: Sendable, Equatable {
  /// One dated event mentioned in the span.
  public struct Event: Sendable, Equatable {
    public var date: String?
    public var text: String
  }

  public var topics: [String]
  /// Facts (salient statements) per speaker.
  public var speakers: [String: [String]]
  public var events: [Event]
  public var decisions: [String]
  public var openTasks: [String]
  public var entities: [String]
  /// The turns whose text the summary quotes (their ids).
  public var quotedMessageIDs: [Int64]
  public var firstMessageID: Int64
  public var lastMessageID: Int64
  public var start: Date
  public var end: Date

  /// The summary as JSON per the schema.
  public var json: JSONValue {
    .object([
      "topics": .array(topics.map { .string($0) }),
      "speakers": .object(speakers.mapValues { .object(["facts": .array($0.map { .string($0) })]) }),
      "events": .array(
        events.map { event in
          var object: [String: JSONValue] = ["text": .string(event.text)]
          if let date = event.date { object["date"] = .string(date) }
          return .object(object)
        }),
      "decisions": .array(decisions.map { .string($0) }),
      "open_tasks": .array(openTasks.map { .string($0) }),
      "entities": .array(entities.map { .string($0) }),
      "quoted_message_ids": .array(quotedMessageIDs.map { .int(Int($0)) }),
      "span": .object([
        "first_message_id": .int(Int(firstMessageID)), "last_message_id": .int(Int(lastMessageID)),
        "start": .string(Self.isoDay(start)), "end": .string(Self.isoDay(end)),
      ]),
    ])
  }

  /// The stored span's day in UTC (`2024-05-01`): stored data, independent of who reads it.
  static func isoDay(_ date: Date) -> String {
    let formatter = ISO8601DateFormatter()
    formatter.formatOptions = [.withFullDate]
    return formatter.string(from: date)
  }

  /// Plain text for full-text search, embedding and prompts.
  public var text: String {
    var parts: [String] = []
    for speaker in speakers.keys.sorted() {
      for fact in speakers[speaker]! { parts.append("\(speaker): \(fact)") }
    }
    if !topics.isEmpty { parts.append("Topics: " + topics.joined(separator: ", ") + ".") }
    if !entities.isEmpty { parts.append("Entities: " + entities.joined(separator: ", ") + ".") }
    return parts.joined(separator: "\n")
  }
}

/// Extractive summaries without a language model: salient turns chosen by centrality and
/// diversity (maximal marginal relevance over the turns' embeddings), plus dates, entities,
/// decisions and open tasks found by simple patterns.
public enum ExtractiveSummarizer {
  /// One turn to summarize.
  public struct Turn: Sendable {
    public var id: Int64
    public var speaker: String?
    public var text: String
    public var date: Date
    /// The turn's unit embedding.
    public var vector: [Float]

    public init(id: Int64, speaker: String?, text: String, date: Date, vector: [Float]) {
      self.id = id
      self.speaker = speaker
      self.text = text
      self.date = date
      self.vector = vector
    }
  }

  /// Summarizes `turns` (in order), quoting at most `maxQuotes` of them, none of low
  /// information (`isLowInformation`) unless every turn is.
  ///
  /// - Parameters:
  ///   - turns: the session's turns, in order.
  ///   - maxQuotes: the most turns the summary quotes.
  ///   - lambda: MMR trade-off between centrality (1) and diversity (0).
  ///   - lowInformation: `isLowInformation` of each turn, when the caller has it.
  /// - Complexity: O(n² · d) for n turns of dimension d.
  public static func summarize(
    _ turns: [Turn], maxQuotes: Int, lambda: Double = 0.7, lowInformation: [Bool]? = nil
  ) -> StructuredSummary? {
    guard let first = turns.first, let last = turns.last else { return nil }
    let n = turns.count
    // Pairwise similarity and centrality.
    var similarity = [Double](repeating: 0, count: n * n)
    for i in 0..<n {
      for j in i..<n {
        var dot: Float = 0
        let a = turns[i].vector
        let b = turns[j].vector
        for d in 0..<min(a.count, b.count) { dot += a[d] * b[d] }
        similarity[i * n + j] = Double(dot)
        similarity[j * n + i] = Double(dot)
      }
    }
    var centrality = [Double](repeating: 0, count: n)
    for i in 0..<n {
      var sum = 0.0
      for j in 0..<n where j != i { sum += similarity[i * n + j] }
      // Informative turns (more content words) are preferred over greetings.
      let information = Double(min(contentWords(turns[i].text).count, 12)) / 12
      centrality[i] = (n > 1 ? sum / Double(n - 1) : 1) * 0.5 + information * 0.5
    }
    // A greeting or a thanks is never worth quoting while the span says anything else; this
    // also lets a compaction plan tell which turns will go without summarizing.
    let low = lowInformation ?? turns.map { isLowInformation($0.text) }
    let informative = (0..<n).filter { !low[$0] }
    var available = Set(informative.isEmpty ? Array(0..<n) : informative)
    let quotes = min(maxQuotes, available.count)
    var selected: [Int] = []
    while selected.count < quotes {
      var best = -1
      var bestScore = -Double.infinity
      for i in available.sorted() {
        let redundancy = selected.map { similarity[i * n + $0] }.max() ?? 0
        let score = lambda * centrality[i] - (1 - lambda) * redundancy
        if score > bestScore {
          bestScore = score
          best = i
        }
      }
      guard best >= 0 else { break }
      selected.append(best)
      available.remove(best)
    }
    selected.sort()

    var speakers: [String: [String]] = [:]
    for i in selected {
      speakers[turns[i].speaker ?? "someone", default: []].append(turns[i].text)
    }
    var events: [StructuredSummary.Event] = []
    var decisions: [String] = []
    var openTasks: [String] = []
    var entityCounts: [String: Int] = [:]
    var wordCounts: [String: Int] = [:]
    for turn in turns {
      for sentence in sentences(turn.text) {
        if let date = dateMention(in: sentence) {
          events.append(StructuredSummary.Event(date: date, text: sentence))
        }
        let lower = sentence.lowercased()
        if decisionMarkers.contains(where: { contains(lower, $0) }) { decisions.append(sentence) }
        if taskMarkers.contains(where: { contains(lower, $0) }) { openTasks.append(sentence) }
      }
      for entity in entities(in: turn.text) { entityCounts[entity, default: 0] += 1 }
      for word in contentWords(turn.text) where word.count > 3 { wordCounts[word, default: 0] += 1 }
    }
    let speakerNames = Set(turns.compactMap { $0.speaker?.lowercased() })
    let topics = wordCounts.filter { !speakerNames.contains($0.key) && $0.value >= 2 }
      .sorted { $0.value != $1.value ? $0.value > $1.value : $0.key < $1.key }
      .prefix(6).map(\.key)
    let entities = entityCounts.filter { !speakerNames.contains($0.key.lowercased()) }
      .sorted { $0.value != $1.value ? $0.value > $1.value : $0.key < $1.key }
      .prefix(10).map(\.key)
    return StructuredSummary(
      topics: Array(topics), speakers: speakers, events: Array(events.prefix(8)),
      decisions: Array(decisions.prefix(5)), openTasks: Array(openTasks.prefix(5)), entities: Array(entities),
      quotedMessageIDs: selected.map { turns[$0].id }, firstMessageID: first.id, lastMessageID: last.id,
      start: first.date, end: last.date)
  }

  static let decisionMarkers = ["decided", "we'll", "i'll", "going to", "plan to", "决定", "打算"]
  static let taskMarkers = ["need to", "have to", "remind", "todo", "to-do", "don't forget", "记得", "需要"]
  static let months = Lexicon.lowercasedMonths
  static let relativeDays = [
    "yesterday", "today", "tomorrow", "last week", "next week", "last month", "next month", "last year",
    "next year", "weekend", "昨天", "今天", "明天", "上周", "下周",
  ]

  /// Words that carry content: letters or digits, lowercased, minus stopwords.
  static func contentWords(_ text: String) -> [String] {
    text.lowercased().split { !$0.isLetter && !$0.isNumber }.map(String.init).filter {
      !stopwords.contains($0)
    }
  }

  static func sentences(_ text: String) -> [String] {
    var result: [String] = []
    var current = ""
    for character in text {
      current.append(character)
      if ".!?。！？".contains(character) {
        let trimmed = trimming(current[...], isSpace)
        if !trimmed.isEmpty { result.append(trimmed) }
        current = ""
      }
    }
    let trimmed = trimming(current[...], isSpace)
    if !trimmed.isEmpty { result.append(trimmed) }
    return result
  }

  static func dateMention(in sentence: String) -> String? {
    let lower = sentence.lowercased()
    let words = lower.split { !$0.isLetter && !$0.isNumber }.map(String.init)
    for (index, word) in words.enumerated() where months.contains(word) {
      var mention = word
      if index + 1 < words.count, Int(words[index + 1]) != nil { mention += " " + words[index + 1] }
      if index > 0, Int(words[index - 1]) != nil { mention = words[index - 1] + " " + mention }
      return mention
    }
    for word in words where word.count == 4 {
      if let year = Int(word), (1900...2100).contains(year) { return word }
    }
    return relativeDays.first { contains(lower, $0) }
  }

  /// Capitalized words that do not start a sentence (names, places, titles).
  static func entities(in text: String) -> [String] {
    var result: [String] = []
    for sentence in sentences(text) {
      let words = sentence.split(separator: " ")
      for (index, raw) in words.enumerated() where index > 0 {
        let word = trimming(raw, isPunctuation)
        guard let firstCharacter = word.first, firstCharacter.isUppercase, word.count > 1 else { continue }
        guard !stopwords.contains(word.lowercased()), word != "I" else { continue }
        result.append(word)
      }
    }
    return result
  }

  /// Whether `text` holds `part`, compared byte by byte (the markers searched for are plain
  /// text, so this matches what a Unicode-aware search finds, without its cost per call).
  static func contains(_ text: String, _ part: String) -> Bool {
    var text = text
    var part = part
    return text.withUTF8 { haystack in
      part.withUTF8 { needle in
        guard let needleBase = needle.baseAddress, !needle.isEmpty else { return true }
        guard let base = haystack.baseAddress, needle.count <= haystack.count else { return false }
        let first = needle[0]
        for start in 0...(haystack.count - needle.count) where haystack[start] == first {
          if memcmp(base + start, needleBase, needle.count) == 0 { return true }
        }
        return false
      }
    }
  }

  /// `CharacterSet.whitespaces`: tab and the space separators (Zs).
  static func isSpace(_ scalar: Unicode.Scalar) -> Bool {
    scalar == "\t" || scalar.properties.generalCategory == .spaceSeparator
  }

  /// `CharacterSet.punctuationCharacters`: the punctuation categories (P*).
  static func isPunctuation(_ scalar: Unicode.Scalar) -> Bool {
    switch scalar.properties.generalCategory {
    case .connectorPunctuation, .dashPunctuation, .openPunctuation, .closePunctuation, .initialPunctuation,
      .finalPunctuation, .otherPunctuation:
      return true
    default: return false
    }
  }

  /// `text` without the leading and trailing scalars `drop` accepts.
  static func trimming(_ text: Substring, _ drop: (Unicode.Scalar) -> Bool) -> String {
    let scalars = text.unicodeScalars
    guard let first = scalars.firstIndex(where: { !drop($0) }) else { return "" }
    let last = scalars.lastIndex(where: { !drop($0) })!
    return String(text[first...last])
  }

  /// A turn carries little information when it has fewer than four content words and no
  /// number or name (greetings, thanks, exclamations).
  public static func isLowInformation(_ text: String) -> Bool {
    let words = contentWords(text)
    if words.count >= 4 { return false }
    if text.contains(where: \.isNumber) { return false }
    if !entities(in: text).isEmpty { return false }
    if text.unicodeScalars.contains(where: { $0.value >= 0x2E80 && $0.value <= 0x9FFF }) && text.count >= 6 {
      return false
    }
    return true
  }

  static let stopwords: Set<String> = [
    "a", "an", "and", "are", "as", "at", "be", "but", "by", "for", "if", "in", "into", "is", "it", "no",
    "not", "of", "on", "or", "such", "that", "the", "their", "then", "there", "these", "they", "this", "to",
    "was", "will", "with", "i", "me", "my", "we", "our", "you", "your", "he", "him", "his", "she", "her",
    "its", "what", "which", "who", "whom", "when", "where", "why", "how", "do", "does", "did", "have", "has",
    "had", "am", "been", "being", "were", "would", "could", "should", "can", "may", "might", "so", "than",
    "too", "very", "just", "about", "after", "before", "from", "up", "down", "out", "over", "under", "again",
    "once", "here", "all", "any", "both", "each", "few", "more", "most", "other", "some", "own", "same",
    "only", "now", "oh", "wow", "yeah", "yes", "hey", "hi", "hello", "thanks", "thank", "great", "really",
    "that's", "it's", "i'm", "you're", "so", "too", "also", "much", "lot", "like", "get", "got", "good",
    "awesome", "amazing", "cool", "nice", "sure", "glad", "hear", "see", "know", "think", "s", "t", "m",
    "re", "ve", "ll", "d",
  ]
}
