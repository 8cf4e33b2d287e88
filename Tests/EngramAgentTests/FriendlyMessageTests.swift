import Engram
import EngramTestSupport
import Testing

@testable import EngramAgent

@Suite(.timeLimit(.minutes(5)), .watchdog) struct FriendlyMessageTests {
  @Test func languageFollowsTextOrPreference() throws {
    #expect(MessageLanguage.detect("明天提醒我") == .chinese)
    #expect(MessageLanguage.detect("remind me tomorrow") == .english)
    #expect(MessageLanguage.detect("") == .english)
    #expect(MessageLanguage.resolve(text: "remind me", preference: "zh-CN") == .chinese)
    #expect(MessageLanguage.resolve(text: "提醒我", preference: "en") == .english)
    #expect(MessageLanguage.resolve(text: "提醒我", preference: "klingon") == .chinese)
    let memory = try TestMemory()
    let ctx = SkillContext(
      userText: "提醒我", turn: TurnContext(allPreferences: ["language": "en"]), clock: .system(),
      engine: memory.engine)
    #expect(ctx.language == .english)
  }

  @Test(arguments: [
    SkillError.missingArgument(name: "when"),
    .invalidArgument(name: "count", reason: .expectedType(.int, value: "x")),
    .permissionDenied(skill: "s"), .timeout(skill: "s", after: .seconds(1)),
    .executionFailed(skill: "s", reason: "r"),
    .confirmationCancelled(skill: "s"), .divisionByZero, .unreadableDate(name: "when", text: "the 32nd"),
  ])
  func everySkillErrorHasBothLanguages(_ error: SkillError) {
    let english = FriendlyMessage.text(for: error, language: .english)
    let chinese = FriendlyMessage.text(for: error, language: .chinese)
    #expect(!english.isEmpty && MessageLanguage.detect(english) == .english)
    #expect(MessageLanguage.detect(chinese) == .chinese)
    #expect(english != chinese)
  }

  @Test func specificWording() {
    #expect(
      FriendlyMessage.text(for: SkillError.missingArgument(name: "when"), language: .chinese)
        == "还缺少时间，能告诉我吗？")
    #expect(
      FriendlyMessage.text(for: SkillError.missingArgument(name: "when"), language: .english)
        == "I need the date and time to do that. Could you tell me?")
    #expect(
      FriendlyMessage.text(for: SkillError.confirmationCancelled(skill: "x"), language: .english)
        == "OK, I cancelled it. Nothing was changed.")
    #expect(
      FriendlyMessage.text(for: SkillError.unreadableDate(name: "when", text: "32号"), language: .chinese)
        == "我看不懂「32号」这个日期或时间，能换个说法吗？比如「6月20日下午3点」。")
    #expect(
      FriendlyMessage.text(for: SkillError.unreadableDate(name: "when", text: "the 32nd"), language: .english)
        == "I couldn't read “the 32nd” as a date or time. Could you say it another way, like “June 20 at 3pm”?"
    )
    let erased: any Error = SkillError.permissionDenied(skill: "x")
    #expect(FriendlyMessage.text(for: erased, language: .chinese) == "我没有权限这样做。")
    #expect(
      FriendlyMessage.text(for: LanguageModelError.timedOut(seconds: 1), language: .english).contains(
        "too long"))
  }
}
