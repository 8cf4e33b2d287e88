import Engram
import Foundation

extension Agent {
  /// The reply to a request no skill takes (small talk is answered by its own plan,
  /// `TurnPlan.converse`): the memories that pass the relevance gate; else "nothing about
  /// that yet" for a question, or what the assistant can do.
  func answerWithoutSkill(_ text: String, context: SkillContext) -> SkillOutput {
    let answerer = MemoryAnswer(modelID: engine.embedder.modelID)
    let output = answerer.reply(
      to: text, from: context.turn.hits, clock: context.clock, language: context.language)
    if case .memories(_, let hits) = output, hits.isEmpty, !TextCues.isQuestion(text) {
      return .text(Self.noSkillMessage(context.language))
    }
    return output
  }

  /// A language model's answer to `text` that keeps the retrieved fact: when memory answers
  /// the question (the extractive answer has a lead) and `answer` lacks that lead's fact
  /// (`MemoryAnswer.carries`), the lead line is added after it, so a model's reply never
  /// drops what memory says. After, not before: the model's text has already been shown as it
  /// streamed in, and the reply must still begin with it. Returns the reply and the items it
  /// rests on (those `answer` cites, plus the lead when it was added).
  func grounded(_ answer: String, cited: [SearchHit], question text: String, context: SkillContext)
    -> (text: String, hits: [SearchHit])
  {
    let answerer = MemoryAnswer(modelID: engine.embedder.modelID)
    guard
      case .memories(let extractive, let hits) = answerer.reply(
        to: text, from: context.turn.hits, clock: context.clock, language: context.language),
      let lead = hits.first,
      !answerer.carries(answer, answerOf: lead, question: text)
    else { return (answer, cited) }
    let line = extractive.split(separator: "\n", maxSplits: 1).first.map(String.init) ?? extractive
    let label = context.language == .english ? "From your memories: " : "记忆里的答案："
    let trimmed = answer.trimmingCharacters(in: .whitespacesAndNewlines)
    let text = trimmed.isEmpty ? line : "\(trimmed)\n\(label)\(line)"
    return (text, cited.contains(lead) ? cited : cited + [lead])
  }

  /// Whether `error` is the language model's failing (unreachable, too slow, cut off, an
  /// unusable reply): a question is then answered from memory instead of failing the turn.
  static func isModelFailure(_ error: any Error) -> Bool {
    error is LanguageModelError || error is PlannerError
  }

  /// The turn's reply when the language model failed on a question: the extractive answer,
  /// with a notice saying why the model's is missing. Text the model had streamed is withdrawn.
  func answerAfterModelFailure(
    _ error: any Error, text: String, context: SkillContext, execution: UUID
  ) async -> AgentState {
    context.partial.reset()
    let output = answerWithoutSkill(text, context: context)
    return await finish(
      AgentReply(
        executionID: execution, text: output.text, outputs: [output], language: context.language,
        route: .memory, notice: FriendlyMessage.fallbackNotice(for: error, language: context.language)))
  }
}

extension SkillOutput {
  /// Whether this is an answer drawn from memory.
  var isMemoryAnswer: Bool {
    if case .memories = self { return true }
    return false
  }
}
