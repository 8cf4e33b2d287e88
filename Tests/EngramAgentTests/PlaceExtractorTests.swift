import EngramTestSupport
import Foundation
import Testing

@testable import EngramAgent

/// Finding the place a request names, in English and Chinese.
@Suite("Place extractor", .timeLimit(.minutes(5)), .watchdog) struct PlaceExtractorTests {
  let extractor = PlaceExtractor(clock: testClock)

  @Test(arguments: [
    ("weather in Lisbon tomorrow", "Lisbon", "Europe/Lisbon"),
    ("Lisbon weather", "Lisbon", "Europe/Lisbon"),
    ("what time is it in New York", "New York", "America/New_York"),
    ("what time is it in new york right now?", "new york", "America/New_York"),
    ("纽约现在几点", "纽约", "America/New_York"),
    ("北京明天会下雨吗", "北京", "Asia/Shanghai"),
    ("东京几点了", "东京", "Asia/Tokyo"),
    ("time in Asia/Tokyo", "Asia/Tokyo", "Asia/Tokyo"),
    ("what's the time in UTC", "UTC", "UTC"),
    ("London time", "London", "Europe/London"),
    ("will it rain in Paris on Friday", "Paris", "Europe/Paris"),
    ("weather for tomorrow in Rio de Janeiro", "Rio de Janeiro", "America/Sao_Paulo"),
    ("what time is it in PST", "PST", "America/Los_Angeles"),
    ("is it 9am in LA yet", "LA", "America/Los_Angeles"),
    ("how hot is it in Dubai this weekend", "Dubai", "Asia/Dubai"),
    ("what's the time in St. Petersburg", "St. Petersburg", "Europe/Moscow"),
    ("上海下周五天气怎么样", "上海", "Asia/Shanghai"),
    ("帮我查一下伦敦的天气", "伦敦", "Europe/London"),
    ("北京时间现在几点", "北京时间", "Asia/Shanghai"),
    ("现在东京时间是几点", "东京", "Asia/Tokyo"),
    ("Tokyo现在几点", "Tokyo", "Asia/Tokyo"),
    ("what time is it in japan", "japan", "Asia/Tokyo"),
  ])
  func findsKnownPlaces(_ text: String, _ written: String, _ zone: String) throws {
    let mention = try #require(extractor.find(in: text), "\(text)")
    #expect(mention.text == written)
    #expect(mention.place?.timeZoneIdentifier == zone)
  }

  @Test(arguments: [
    ("what time is it in Atlantis", "Atlantis"),
    ("weather in Springfield tomorrow", "Springfield"),
    ("will it rain in Nova Lima later", "Nova Lima"),
    ("亚特兰蒂斯现在几点", "亚特兰蒂斯"),
    ("蒙特卡洛明天天气怎么样", "蒙特卡洛"),
  ])
  func findsPlacesTheTableDoesNotKnow(_ text: String, _ written: String) throws {
    let mention = try #require(extractor.find(in: text), "\(text)")
    #expect(mention.text == written)
    #expect(mention.place == nil)
  }

  @Test(arguments: [
    "what time is it", "how hot is it outside", "what's the weather like at home",
    "what time is it in the office",
    "will it rain in 2 hours", "do I need an umbrella", "what's the weather for the weekend", "今天天气怎么样",
    "外面多少度", "明天会下雨吗", "现在几点了", "我们这边明天下雨吗", "is it going to snow in the morning",
    "what's the temperature at 3pm", "will it rain in an hour",
  ])
  func namesNoPlace(_ text: String) {
    #expect(extractor.find(in: text) == nil, "\(text)")
  }

  /// Every name in the table is found in a sentence around it, with date words beside it.
  @Test func everyTableNameIsFoundInASentence() {
    for row in PlaceDirectory.cities + PlaceDirectory.countries {
      let english = extractor.find(in: "what's the weather in \(row.english) tomorrow?")
      #expect(
        english?.place?.timeZoneIdentifier == row.zone, "\(row.english): \(String(describing: english))")
      let chinese = extractor.find(in: "\(row.chinese)明天天气怎么样")
      #expect(
        chinese?.place?.timeZoneIdentifier == row.zone, "\(row.chinese): \(String(describing: chinese))")
    }
  }

  @Test(arguments: [
    ("my home city is Lisbon", "Lisbon"), ("I live in Lisbon", "Lisbon"),
    ("I live in New York City now", "New York City"), ("i'm based in Porto, near the river", "Porto"),
    ("I live in Springfield with my wife", "Springfield"), ("我住在北京", "北京"), ("我家在上海", "上海"),
    ("我住在北京朝阳区", "北京"), ("我现在住在蒙特卡洛了", "蒙特卡洛"), ("I moved to Berlin last month", "Berlin"),
  ])
  func homeCityStatements(_ text: String, _ city: String) {
    #expect(extractor.homeCity(statedIn: text) == city)
  }

  @Test(arguments: [
    "I like Lisbon", "I live in a small flat", "where do I live?", "我住在这里", "我喜欢北京", "my home is lovely",
    "I don't live in Lisbon anymore",
  ])
  func statementsThatNameNoHomeCity(_ text: String) {
    #expect(extractor.homeCity(statedIn: text) == nil, "\(text)")
  }
}
