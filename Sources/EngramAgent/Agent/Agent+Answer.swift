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
}

extension SkillOutput {
  /// Whether this is an answer drawn from memory.
  var isMemoryAnswer: Bool {
    if case .memories = self { return true }
    return false
  }
}
