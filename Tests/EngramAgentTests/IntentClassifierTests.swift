import EngramCore
import EngramTestSupport
import Foundation
import Testing

@testable import EngramAgent

@Suite(.timeLimit(.minutes(5)), .watchdog) struct IntentFeaturesTests {
  @Test func tokenizesWordsCJKRunsAndSymbols() {
    let tokens = Tokenizer.intent.tokens("Remind me at 6:15 明天开会？ 17% of 2350")
    let keys = tokens.map(\.key)
    #expect(keys == ["wremind", "wme", "wat", "w0", "p:", "w0", "z明天", "p?", "w0", "p%", "wof", "w0"])
  }

  @Test func fullWidthFormsReadAsASCII() {
    #expect(Tokenizer.intent.tokens("ＡＢＣ１２？").map(\.key) == ["wabc0", "p?"])
  }

  @Test func featuresAreDistinctAndInRange() {
    let features = IntentFeatures.extract("what is my wifi password 我的密码是什么")
    #expect(Set(features).count == features.count)
    #expect(features.allSatisfy { $0 >= 0 && Int($0) < IntentFeatures.dimension })
    #expect(IntentFeatures.extract("") == IntentFeatures.extract(""))
  }
}

@Suite(.timeLimit(.minutes(5)), .watchdog) struct IntentClassifierTests {
  static let toy: [(text: String, label: String)] = [
    ("set an alarm for seven", "alarm"), ("wake me at six", "alarm"), ("alarm at 5 please", "alarm"),
    ("play some jazz", "music"), ("put on a song", "music"), ("play the new album", "music"),
    ("叫我起床", "alarm"), ("明早六点叫醒我", "alarm"), ("放首歌", "music"), ("播放音乐", "music"),
  ]

  @Test func learnsToSeparateLabelsInBothLanguages() {
    let classifier = IntentClassifier(examples: Self.toy)
    #expect(Set(classifier.labels) == ["alarm", "music"])
    #expect(classifier.predict("set an alarm for eight").label == "alarm")
    #expect(classifier.predict("play some music").label == "music")
    #expect(classifier.predict("明早七点叫醒我").label == "alarm")
    #expect(classifier.predict("放音乐").label == "music")
  }

  @Test func probabilitiesAreADistributionBestFirst() {
    let prediction = IntentClassifier(examples: Self.toy).predict("play a song")
    let total = prediction.ranked.reduce(0) { $0 + $1.probability }
    #expect(abs(total - 1) < 1e-4)
    #expect(prediction.ranked.first?.label == prediction.label)
    #expect(prediction.confidence == prediction.ranked[0].probability)
  }

  @Test func trainingIsDeterministic() {
    let first = IntentClassifier(examples: Self.toy).predict("wake me up at seven")
    let second = IntentClassifier(examples: Self.toy).predict("wake me up at seven")
    #expect(first.ranked.map(\.probability) == second.ranked.map(\.probability))
  }

  @Test func noExamplesMeansNoneWithNoConfidence() {
    let prediction = IntentClassifier(examples: []).predict("anything")
    #expect(prediction.label == IntentClassifier.noneLabel)
    #expect(prediction.confidence == 0)
  }

  /// The built-in corpus covers every built-in skill, `none` and the no-skill labels of
  /// small talk and retraction (`ConversationIntent`), in both languages.
  @Test func builtInCorpusCoversEverySkillInBothLanguages() {
    let labels = Set(IntentCorpus.examples.map(\.label))
    let skills = Set(BuiltInSkills.all().map(\.id))
    let conversation = Set(ConversationIntent.allCases.map(\.rawValue))
    #expect(labels == skills.union([IntentClassifier.noneLabel]).union(conversation))
    for label in conversation {
      let texts = IntentCorpus.examples.filter { $0.label == label }.map(\.text)
      #expect(texts.contains { $0.unicodeScalars.contains(where: \.isCJKIdeograph) }, "\(label)")
      #expect(texts.contains { $0.allSatisfy(\.isASCII) }, "\(label)")
    }
    #expect(IntentCorpus.examples.count >= 1500)
    let chinese = IntentCorpus.examples.filter { $0.text.unicodeScalars.contains(where: \.isCJKIdeograph) }
    #expect(chinese.count >= IntentCorpus.examples.count / 3)
  }

  /// Held-out accuracy of the model on its own corpus (every fifth example held out): a
  /// model that memorizes without generalizing fails this.
  @Test func generalizesToHeldOutCorpusExamples() {
    let examples = IntentCorpus.examples
    let train = examples.enumerated().filter { $0.offset % 5 != 0 }.map(\.element)
    let test = examples.enumerated().filter { $0.offset % 5 == 0 }.map(\.element)
    let classifier = IntentClassifier(examples: train)
    let correct = test.filter { classifier.predict($0.text).label == $0.label }.count
    #expect(Double(correct) / Double(test.count) >= 0.85)
  }

  /// `make corpus` output is current: the generated literal holds exactly the JSON lines.
  @Test func generatedCorpusMatchesTheJSONLines() throws {
    let source = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
      .deletingLastPathComponent().appendingPathComponent("Sources/EngramAgent/Intent/intent-corpus.jsonl")
    let lines = try String(contentsOf: source, encoding: .utf8).split(whereSeparator: \.isNewline)
    struct Line: Decodable {
      var text: String
      var label: String
    }
    let decoded = try lines.map { try JSONDecoder().decode(Line.self, from: Data($0.utf8)) }
    #expect(
      decoded.count == IntentCorpus.examples.count, "stale IntentCorpus+Generated.swift: run `make corpus`")
    #expect(decoded.map(\.label) == IntentCorpus.examples.map(\.label))
  }
}
