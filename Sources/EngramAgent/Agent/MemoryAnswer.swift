import Engram
import EngramCore
import Foundation

/// Answers a question from retrieved memories: when any of them passes the relevance gate,
/// up to three in the retrieval's order (those that pass, and the best-ranked ones that
/// share a term with the question), with their dates; else an honest "nothing about that
/// yet".
///
/// **The gate.** A retrieved item bears on the question when it covers enough of the
/// question's content terms (words without question words and other stopwords, cut to five
/// letters so "research" meets "researching"; CJK character pairs), or when the embedder is
/// the calibrated MiniLM model and its cosine is high. Both thresholds were calibrated with
/// `engram-bench answers --calibrate` on two dev conversations (questions against their own
/// conversation versus against another one), not on the questions the benchmark reports.
public struct MemoryAnswer: Sendable {
  /// The least share of the question's content terms an item must contain.
  public var minimumCoverage: Double
  /// The cosine from which an item passes on similarity alone (nil: coverage only).
  public var minimumCosine: Double?
  /// How many items an answer quotes at most.
  public var maximumItems: Int

  /// The model whose cosines `minimumCosine` was calibrated for.
  public static let calibratedModel = "sentence-transformers/all-MiniLM-L6-v2"

  /// The calibrated gate for the embedder `modelID` (its cosine threshold only applies to
  /// the model it was calibrated on).
  public init(
    modelID: String? = nil, minimumCoverage: Double = 0.55, minimumCosine: Double = 0.45,
    maximumItems: Int = 3
  ) {
    self.minimumCoverage = minimumCoverage
    self.minimumCosine = modelID == Self.calibratedModel ? minimumCosine : nil
    self.maximumItems = maximumItems
  }

  /// The items among `memories` (best first) that pass the gate for `question`, at most
  /// `maximumItems`, in their order.
  public func relevant(_ memories: [SearchHit], to question: String) -> [SearchHit] {
    let terms = Self.contentTerms(question)
    var passed: [SearchHit] = []
    for memory in memories where passes(memory, terms: terms) {
      passed.append(memory)
      if passed.count == maximumItems { break }
    }
    return passed
  }

  /// Whether `memory` passes the gate for a question with content `terms`.
  public func passes(_ memory: SearchHit, terms: Set<String>) -> Bool {
    if let minimumCosine, let cosine = memory.cosine, cosine >= minimumCosine { return true }
    guard !terms.isEmpty else { return false }
    return Self.coverage(of: terms, in: memory) >= minimumCoverage
  }

  /// The share of `terms` found in the memory's text and speaker.
  public static func coverage(of terms: Set<String>, in memory: SearchHit) -> Double {
    guard !terms.isEmpty else { return 0 }
    let found = contentTerms(memory.text, keepStopwords: true).union(
      memory.speaker.map { contentTerms($0, keepStopwords: true) } ?? [])
    return Double(terms.intersection(found).count) / Double(terms.count)
  }

  /// The reply to `question` from `memories` (best first), when any passes the gate: up to
  /// `maximumItems` of them (see the type), leading with the answer: the one sentence of the best item that
  /// covers most of the question (for a "when"
  /// question, the time it names resolved against the day it was said, "7 May 2023"), with
  /// who said it and its date; for a question about two things whose lead leaves the second
  /// uncovered, the item that covers it next; then the other relevant items, shortened.
  /// Nothing relevant: a sentence saying memory holds nothing about it.
  public func reply(
    to question: String, from memories: [SearchHit], clock: AgentClock, language: MessageLanguage
  )
    -> SkillOutput
  {
    // The gate decides whether memory holds anything on the question (it was calibrated on
    // exactly that: questions against their own conversation or another one). The answer
    // then quotes, in the ranking's order, the items that pass it and, among the ranking's
    // best `maximumItems`, those that share a content term with the question (the
    // re-ranker was fitted to put the answering turn first, where the gate's coverage and
    // cosine can miss it; an item sharing nothing with the question is never quoted).
    let terms = Self.contentTerms(question)
    let passing = memories.map { passes($0, terms: terms) }
    guard passing.contains(true) else { return .memories(answer: Self.nothingYet(language), hits: []) }
    let chosen = Array(
      memories.indices.filter { rank in
        passing[rank] || (rank < maximumItems && Self.coverage(of: terms, in: memories[rank]) > 0)
      }.map { memories[$0] }.prefix(maximumItems))
    let lead = chosen[0]
    var lines = [leadLine(lead, question: question, terms: terms, clock: clock, language: language)]
    var rest = Array(chosen.dropFirst())
    // A question about two things: the item that covers what the lead leaves out answers too.
    let uncovered = terms.subtracting(Self.terms(of: lead))
    if Self.asksAboutTwoThings(question), !uncovered.isEmpty,
      let second = rest.firstIndex(where: { !uncovered.isDisjoint(with: Self.terms(of: $0)) })
    {
      let item = rest.remove(at: second)
      lines.append(leadLine(item, question: question, terms: uncovered, clock: clock, language: language))
    }
    for item in rest {
      lines.append("- " + Self.shortened(item, clock: clock, language: language))
    }
    return .memories(answer: lines.joined(separator: "\n"), hits: chosen)
  }

  /// Whether `reply` (a language model's answer) carries the fact of `item` that answers
  /// `question`: the words of `item`'s answering sentence that the question does not already
  /// hold (the answer: "4512" in "my locker code is 4512" for "what is my locker code?").
  /// Every number among them must be in the reply, and at least half of the other words
  /// (cut to five letters, as the gate compares them); nothing to look for is carried.
  public func carries(_ reply: String, answerOf item: SearchHit, question: String) -> Bool {
    let asked = Self.contentTerms(question, keepStopwords: true)
    let sentence =
      item.text.count <= Self.wholeItemCharacters
      ? item.text : Self.bestSentence(of: item.text, covering: Self.contentTerms(question))
    // Numbers are compared whole (the word terms read every digit run as one "0").
    let numbers = Self.numbers(in: sentence).subtracting(Self.numbers(in: question))
    guard numbers.isSubset(of: Self.numbers(in: reply)) else { return false }
    let words = Self.contentTerms(sentence).subtracting(asked)
    guard !words.isEmpty else { return true }
    let said = Self.contentTerms(reply, keepStopwords: true)
    return 2 * words.intersection(said).count >= words.count
  }

  /// The digit runs of `text` ("4512", "2023"), ASCII and full-width digits alike.
  static func numbers(in text: String) -> Set<String> {
    var numbers = Set<String>()
    var current = ""
    for character in text {
      if let digit = character.wholeNumberValue, character.isNumber, (0...9).contains(digit),
        !character.isLetter
      {
        current.append(String(digit))
      } else if !current.isEmpty {
        numbers.insert(current)
        current = ""
      }
    }
    if !current.isEmpty { numbers.insert(current) }
    return numbers
  }

  /// The answer line of `item`: its sentence that covers most of `terms`, with who said it
  /// and when; a "when" question's line starts with the time that sentence names, resolved
  /// against the day it was said ("yesterday" said on 8 May 2023: "7 May 2023").
  func leadLine(
    _ item: SearchHit, question: String, terms: Set<String>, clock: AgentClock, language: MessageLanguage
  ) -> String {
    // A short item is its own answer; a long one gives the sentence that covers most.
    let sentence =
      item.text.count <= Self.wholeItemCharacters
      ? item.text.split(whereSeparator: \.isNewline).joined(separator: " ")
      : Self.bestSentence(of: item.text, covering: terms)
    let who = item.speaker.map { "\($0): " } ?? ""
    let day = Self.day(item.timestamp, clock: clock, language: language)
    if Self.asksWhen(question),
      let resolved = PastDateResolver.resolve(sentence, said: item.timestamp, calendar: clock.calendar)
    {
      let when = PastDateResolver.describe(resolved, calendar: clock.calendar, language: language)
      return language == .english
        ? "\(when): \(who)\(sentence) (said \(day))"
        : "\(when)：\(who)\(sentence)（\(day)说的）"
    }
    return language == .english ? "\(who)\(sentence) (\(day))" : "\(who)\(sentence)（\(day)）"
  }

  /// A supporting item on one short line: its start (at most `supportCharacters`, cut at a
  /// word) with who said it and its day.
  static func shortened(_ item: SearchHit, clock: AgentClock, language: MessageLanguage) -> String {
    var text = item.text.split(whereSeparator: \.isNewline).joined(separator: " ")
    if text.count > supportCharacters {
      let cut = text.prefix(supportCharacters)
      let end = cut.lastIndex(of: " ").map {
        $0 > cut.index(cut.startIndex, offsetBy: 60) ? $0 : cut.endIndex
      }
      text = String(cut[..<(end ?? cut.endIndex)]) + "…"
    }
    let who = item.speaker.map { "\($0): " } ?? ""
    let day = Self.day(item.timestamp, clock: clock, language: language)
    return language == .english ? "\(who)\(text) (\(day))" : "\(who)\(text)（\(day)）"
  }

  /// Up to this length an answering item is quoted whole, not cut to its best sentence.
  static let wholeItemCharacters = 160

  /// How long a supporting item's line may quote.
  static let supportCharacters = 72

  /// The sentence of `text` holding most of `terms` (the first on a tie; the whole text
  /// when it is one sentence).
  static func bestSentence(of text: String, covering terms: Set<String>) -> String {
    let sentences = Self.sentences(of: text)
    guard sentences.count > 1, !terms.isEmpty else { return sentences.first ?? text }
    var best = sentences[0]
    var bestCount = -1
    for sentence in sentences {
      let count = terms.intersection(contentTerms(sentence, keepStopwords: true)).count
      if count > bestCount {
        best = sentence
        bestCount = count
      }
    }
    return best
  }

  /// The sentences of `text` (split after . ! ? 。！？ and line breaks), trimmed.
  public static func sentences(of text: String) -> [String] {
    var sentences: [String] = []
    var current = ""
    for character in text {
      if character.isNewline {
        sentences.append(current)
        current = ""
        continue
      }
      current.append(character)
      if ".!?。！？".contains(character) {
        sentences.append(current)
        current = ""
      }
    }
    sentences.append(current)
    return sentences.map { $0.trimmingCharacters(in: .whitespaces) }.filter { $0.count > 1 }
  }

  /// The day of `date` in the user's zone (YYYY-MM-DD).
  static func day(_ date: Date, clock: AgentClock, language: MessageLanguage) -> String {
    String(TextCues.render(date, clock: clock, language: language).prefix(10))
  }

  /// Every term of an item's text and speaker.
  static func terms(of item: SearchHit) -> Set<String> {
    contentTerms(item.text, keepStopwords: true).union(
      item.speaker.map { contentTerms($0, keepStopwords: true) } ?? [])
  }

  /// Whether `question` asks for a time (the re-ranker's reading).
  static func asksWhen(_ question: String) -> Bool { Reranker.asksWhen(question) }

  /// Whether `question` joins two things ("... and ...", "both", 和/还有).
  static func asksAboutTwoThings(_ question: String) -> Bool {
    let words = question.lowercased().split { !$0.isLetter }
    return words.contains("and") || words.contains("both") || question.contains("和")
      || question.contains("还有")
  }

  /// The honest answer when memory holds nothing relevant.
  public static func nothingYet(_ language: MessageLanguage) -> String {
    language == .english ? "I don't have anything about that yet." : "我还没有这方面的记忆。"
  }

  // MARK: - Terms

  /// Content terms of `text`: lowercased words (possessive dropped, cut to five letters)
  /// that are not stopwords, and pairs of adjacent CJK characters without a function
  /// character (the run's content characters when it has no such pair). With
  /// `keepStopwords`, every word, character and pair: the side a question is matched in.
  public static func contentTerms(_ text: String, keepStopwords: Bool = false) -> Set<String> {
    var terms = Set<String>()
    for token in Tokenizer.intent.tokens(text) {
      switch token {
      case .word(var word):
        if word.hasSuffix("'s") { word.removeLast(2) }
        word = word.trimmingCharacters(in: CharacterSet(charactersIn: "'"))
        guard word.count >= 2, word != "0" else { continue }
        if !keepStopwords && englishStopwords.contains(word) { continue }
        terms.insert(String(word.prefix(5)))
      case .cjk(let run):
        let characters = Array(run)
        if keepStopwords {
          for character in characters { terms.insert(String(character)) }
          for index in characters.indices.dropLast() { terms.insert(String(characters[index...index + 1])) }
          continue
        }
        var pairs = 0
        for index in characters.indices.dropLast() {
          let pair = characters[index...index + 1]
          if pair.contains(where: chineseFunctionCharacters.contains) { continue }
          terms.insert(String(pair))
          pairs += 1
        }
        if pairs == 0 {
          for character in characters where !chineseFunctionCharacters.contains(character) {
            terms.insert(String(character))
          }
        }
      case .symbol: continue
      }
    }
    return terms
  }

  /// Question words, auxiliaries, pronouns, determiners and prepositions.
  static let englishStopwords = Set(SkillWords.list("memory_answer.english_stop_words"))

  /// CJK characters that carry grammar rather than content.
  static let chineseFunctionCharacters: Set<Character> = [
    "我", "你", "他", "她", "它", "们", "的", "了", "吗", "呢", "吧", "啊", "呀", "是", "在", "有", "没", "什", "么",
    "怎", "哪", "谁", "几", "和", "跟", "就", "都", "也", "还", "这", "那", "个", "过", "说", "告", "诉", "记", "得",
    "要", "想", "会", "能", "让", "把", "被", "给", "对", "从", "到", "上", "下", "里", "请", "问", "一", "不",
  ]
}
