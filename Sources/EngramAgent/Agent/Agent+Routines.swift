import Engram
import Foundation

/// Routines defined in chat: "when I say evening wrap up, show today's calendar, my
/// reminders and the weather" saves the routine (nothing is run); saying its name later runs
/// its requests as one plan (`TurnRouter+Routines.swift`, `Agent+Plan.swift`).
extension Agent {
  /// Saves `definition` (or says which request could not be read, saving nothing).
  func saveRoutine(_ definition: RoutineDefinition, execution: UUID, language: MessageLanguage) async
    -> AgentState
  {
    let text: String
    if !definition.unreadable.isEmpty {
      text = Self.routineRefusedSentence(definition, language: language)
    } else {
      let routine = Routine(
        name: definition.name, steps: definition.steps, createdAt: configuration.clock.now)
      let engine = self.engine
      let replaced: Bool
      do {
        replaced = try await engine.agentRecords.saveRoutine(routine)
      } catch {
        return await fail(execution, error, language: language, skillID: nil)
      }
      text = Self.routineSavedSentence(routine, replaced: replaced, language: language)
    }
    return await finish(
      AgentReply(
        executionID: execution, text: text, outputs: [.text(text)], language: language, route: .routine))
  }

  /// Lists the routines, or removes one ("remove the routine NAME"); says what it did.
  func manageRoutines(_ request: RoutineRequest, execution: UUID, language: MessageLanguage) async
    -> AgentState
  {
    let engine = self.engine
    let text: String
    do {
      switch request {
      case .list:
        let routines = try await engine.agentRecords.routines()
        text = Self.routineListSentence(routines, language: language)
      case .remove(let name):
        let removed: Bool
        do {
          try await engine.agentRecords.removeRoutine(named: name)
          removed = true
        } catch AgentRecordError.routineNotFound {
          removed = false
        }
        switch (removed, language) {
        case (true, .english): text = "Removed the routine “\(name)”."
        case (true, .chinese): text = "已删除例程“\(name)”。"
        case (false, .english): text = "No routine is named “\(name)”; nothing was removed."
        case (false, .chinese): text = "没有名为“\(name)”的例程，没有删除任何内容。"
        }
      }
    } catch {
      return await fail(execution, error, language: language, skillID: nil)
    }
    return await finish(
      AgentReply(
        executionID: execution, text: text, outputs: [.text(text)], language: language, route: .routine))
  }

  /// The routines, one a line with their steps; or how to make one.
  static func routineListSentence(_ routines: [Routine], language: MessageLanguage) -> String {
    guard !routines.isEmpty else {
      return language == .english
        ? "You have no routines yet. Say “when I say NAME, ...” to make one."
        : "你还没有例程。说“以后我说“名字”就……”即可创建。"
    }
    return routines.map { routine in
      let off = routine.enabled ? "" : (language == .english ? " (disabled)" : "（已停用）")
      return "“\(routine.name)”\(off): " + routine.steps.map(\.text).joined(separator: "; ")
    }.joined(separator: "\n")
  }

  /// "Saved the routine “evening wrap up”: 1. show today's calendar ... Say “evening wrap up” to run it."
  static func routineSavedSentence(_ routine: Routine, replaced: Bool, language: MessageLanguage) -> String {
    let steps = routine.steps.enumerated().map { "\($0.offset + 1). \($0.element.text)" }
    switch language {
    case .english:
      let head = replaced ? "Updated the routine" : "Saved the routine"
      return (["\(head) “\(routine.name)”:"] + steps + ["Say “\(routine.name)” to run it."])
        .joined(separator: "\n")
    case .chinese:
      let head = replaced ? "已更新例程" : "已保存例程"
      return (["\(head)“\(routine.name)”："] + steps + ["说“\(routine.name)”即可执行。"]).joined(separator: "\n")
    }
  }

  /// Why a definition was not saved: the requests no skill claims.
  static func routineRefusedSentence(_ definition: RoutineDefinition, language: MessageLanguage) -> String {
    switch language {
    case .english:
      let quoted = definition.unreadable.map { "“\($0)”" }.joined(separator: ", ")
      return
        "I did not save the routine “\(definition.name)”: I cannot tell what \(quoted) asks me to do. Say each step as a request, such as “show my reminders”."
    case .chinese:
      let quoted = definition.unreadable.map { "“\($0)”" }.joined(separator: "、")
      return "没有保存例程“\(definition.name)”：我看不懂\(quoted)要我做什么。请把每一步说成一个请求，例如“看看我的提醒”。"
    }
  }
}
