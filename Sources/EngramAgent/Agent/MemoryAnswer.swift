import Foundation

/// Answers a question from retrieved memories: the one to three that pass the relevance
/// gate, best first, with their dates; or an honest "nothing about that yet".
///
/// **The gate.** A retrieved item answers the question when it covers enough of the
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
  public func relevant(_ memories: [RecalledMemory], to question: String) -> [RecalledMemory] {
    let terms = Self.contentTerms(question)
    var passed: [RecalledMemory] = []
    for memory in memories where passes(memory, terms: terms) {
      passed.append(memory)
      if passed.count == maximumItems { break }
    }
    return passed
  }

  /// Whether `memory` passes the gate for a question with content `terms`.
  public func passes(_ memory: RecalledMemory, terms: Set<String>) -> Bool {
    if let minimumCosine, let cosine = memory.cosine, cosine >= minimumCosine { return true }
    guard !terms.isEmpty else { return false }
    return Self.coverage(of: terms, in: memory) >= minimumCoverage
  }

  /// The share of `terms` found in the memory's text and speaker.
  public static func coverage(of terms: Set<String>, in memory: RecalledMemory) -> Double {
    guard !terms.isEmpty else { return 0 }
    let found = contentTerms(memory.text, keepStopwords: true).union(
      memory.speaker.map { contentTerms($0, keepStopwords: true) } ?? [])
    return Double(terms.intersection(found).count) / Double(terms.count)
  }

  /// The reply to `question` from `memories` (best first): the relevant items with their
  /// dates, or a sentence saying memory holds nothing about it.
  public func reply(
    to question: String, from memories: [RecalledMemory], clock: AgentClock, language: MessageLanguage
  )
    -> SkillOutput
  {
    let chosen = relevant(memories, to: question)
    guard !chosen.isEmpty else { return .memories(answer: Self.nothingYet(language), hits: []) }
    let lines = chosen.map { memory -> String in
      let who = memory.speaker.map { "\($0): " } ?? ""
      guard let date = memory.date else { return "- \(who)\(memory.text)" }
      let day = String(TextCues.render(date, clock: clock, language: language).prefix(10))
      return language == .english ? "- \(who)\(memory.text) (\(day))" : "- \(who)\(memory.text)（\(day)）"
    }
    let header = language == .english ? "From what you've told me:" : "根据我记得的："
    return .memories(answer: ([header] + lines).joined(separator: "\n"), hits: chosen)
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
    for token in IntentFeatures.tokenize(text) {
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
