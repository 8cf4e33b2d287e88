import EngramTestSupport
import Foundation
import Testing

@testable import EngramEmbeddings

/// A pass of several sequences runs on lanes (`BertModel.vectors(_:threads:normalizes:)`):
/// every sequence is taken once, in order, and its vector is the one a single pass over the
/// whole batch computes, bit for bit.
@Suite(.timeLimit(.minutes(5)), .watchdog) struct LaneTests {
  /// Every run a lane takes: contiguous from the first sequence to the last, at least
  /// `laneMinimumTokens` each, shrinking towards the end.
  static func runs(
    _ counts: [Int], lanes: Int, maxTokens: Int = .max, minimumTokens: Int = BertModel.laneMinimumTokens
  ) -> [Range<Int>] {
    let state = BertModel.LaneState(
      counts: counts, lanes: lanes, maxTokens: maxTokens, minimumTokens: minimumTokens)
    var runs: [Range<Int>] = []
    while let run = state.claim() { runs.append(run) }
    return runs
  }

  @Test("the runs cover the pass in order, each of at least the minimum tokens")
  func runsCoverThePass() {
    let minimum = BertModel.laneMinimumTokens
    for lanes in [2, 3] {
      for counts in [
        (0..<256).map { 20 + ($0 * 37) % 90 }, Array(repeating: 70, count: 32), [300, 5, 5, 400, 7, 260],
        Array(repeating: 512, count: 9),
      ] {
        let runs = Self.runs(counts, lanes: lanes)
        #expect(runs.first?.lowerBound == 0)
        #expect(runs.last?.upperBound == counts.count)
        for (left, right) in zip(runs, runs.dropFirst()) { #expect(left.upperBound == right.lowerBound) }
        for run in runs {
          #expect(!run.isEmpty)
          #expect(counts[run].reduce(0, +) >= minimum, "\(counts.count) sequences, \(lanes) lanes: \(runs)")
        }
      }
    }
    // About a fourth of what is left at first (two lanes), down to the minimum.
    let long = Self.runs(Array(repeating: 64, count: 64), lanes: 2)
    #expect(long.first == 0..<16)
    #expect(long.count > 4)
    #expect(long.dropFirst().allSatisfy { $0.count <= long[0].count })
    // A long call: runs of at most `laneMaximumTokens` until a fourth of what is left is less.
    let longer = Self.runs(Array(repeating: 64, count: 512), lanes: 2)
    #expect(longer.first == 0..<(BertModel.laneMaximumTokens / 64))
    #expect(longer.count > 32)
  }

  @Test("at int8 a call's last runs shrink to the tail minimum, so the lanes finish close together")
  func int8RunsShrinkAtTheEnd() {
    let counts = (0..<256).map { 40 + ($0 * 37) % 60 }
    let minimum = BertModel.laneTailMinimumTokens
    #expect(minimum < BertModel.laneMinimumTokens)
    let runs = Self.runs(counts, lanes: 2, minimumTokens: minimum)
    #expect(runs.first?.lowerBound == 0)
    #expect(runs.last?.upperBound == counts.count)
    for (left, right) in zip(runs, runs.dropFirst()) { #expect(left.upperBound == right.lowerBound) }
    let tokens = runs.map { counts[$0].reduce(0, +) }
    // Every run but the last holds at least the minimum; the last at most twice it.
    for run in tokens.dropLast() { #expect(run >= minimum) }
    #expect(tokens.last! < 2 * minimum + 100)
    // The float minimum's last run is several times longer (what a lane waited for).
    let float = Self.runs(counts, lanes: 2).map { counts[$0].reduce(0, +) }
    #expect(float.last! >= BertModel.laneMinimumTokens)
    #expect(tokens.last! * 3 < float.last!)
    // The model picks the tail minimum at int8 only.
    let minimums = [EmbeddingPrecision.float32, .int8].map { precision in
      (try? InstalledModel.embedder(threads: 2, precision: precision))?.model.laneRunMinimumTokens
    }
    #expect(minimums == [BertModel.laneMinimumTokens, minimum])
  }

  @Test("runs hold at most the tokens of a pass, a longer sequence alone")
  func runsStayWithinAPass() {
    let maxTokens = 700
    for counts in [
      (0..<600).map { 20 + ($0 * 37) % 90 }, Array(repeating: 70, count: 300),
      [300, 5, 5, 1_200, 7, 260, 690, 11],
    ] {
      let runs = Self.runs(counts, lanes: 2, maxTokens: maxTokens)
      #expect(runs.first?.lowerBound == 0)
      #expect(runs.last?.upperBound == counts.count)
      for (left, right) in zip(runs, runs.dropFirst()) { #expect(left.upperBound == right.lowerBound) }
      for run in runs {
        #expect(run.count == 1 || counts[run].reduce(0, +) <= maxTokens, "\(runs)")
      }
    }
  }

  @Test("a call of several passes runs on lanes across them, with the vectors of one pass")
  func lanesSpanPasses() async throws {
    let one = try InstalledModel.embedder(threads: 1, precision: .int8)
    let two = try BertEmbedder(
      directory: one.directory,
      options: BertEmbedder.Options(threads: 2, maxTokensPerPass: 600, precision: .int8))
    let texts = Self.turns(96)
    let tokens = texts.map { one.tokenizer.encode($0).count }.reduce(0, +)
    #expect(tokens >= 3 * two.maxTokensPerPass)
    let expected = try await one.embed(texts)
    let found = try await two.embed(texts)
    #expect(texts.indices.filter { found[$0] != expected[$0] } == [], "texts whose vectors differ")
  }

  /// Turns as ingest embeds them (time, speaker, the turn replied to), about 40 tokens each.
  static func turns(_ count: Int) -> [String] {
    let sentences = BertEmbedderTests.fixture.sentences.map(\.exactText).filter { !$0.isEmpty }
    return (0..<count).map { index in
      let text = sentences[index % sentences.count].prefix(160)
      let previous = sentences[(index + 5) % sentences.count].prefix(80)
      return "[\(index % 12 + 1):0\(index % 6) pm on \(index % 28 + 1) May, 2023] "
        + (index.isMultiple(of: 2) ? "Caroline" : "Melanie") + ": \(text) (replying to: \(previous))"
    }
  }

  @Test(
    "a batch embedded on lanes gets the vectors of one single-threaded pass, bit for bit",
    arguments: [EmbeddingPrecision.float32, .int8])
  func lanesMatchOnePass(precision: EmbeddingPrecision) async throws {
    let one = try InstalledModel.embedder(threads: 1, precision: precision)
    let two = try InstalledModel.embedder(threads: 2, precision: precision)
    let texts = Self.turns(96)
    let tokens = texts.map { one.tokenizer.encode($0).count }.reduce(0, +)
    // Enough tokens for several runs on each of two lanes, within one pass.
    #expect(tokens >= 4 * BertModel.laneMinimumTokens)
    #expect(tokens <= one.maxTokensPerPass)
    let expected = try await one.embed(texts)
    let found = try await two.embed(texts)
    #expect(found.count == texts.count)
    #expect(texts.indices.filter { found[$0] != expected[$0] } == [], "texts whose vectors differ")
  }

  @Test("e5-small at int8: runs down to the tail minimum get the vectors of one single-threaded pass")
  func e5QuantizedLanesMatchOnePass() async throws {
    let two = try InstalledE5.embedder(precision: .int8)
    let one = try E5Embedder(file: two.file, options: BertEmbedder.Options(threads: 1, precision: .int8))
    let texts = Self.turns(160)
    // Runs below the float minimum at the end of the call.
    let counts = texts.map { two.pieceIDs($0, as: .passage).count + 2 }
    let runs = Self.runs(counts, lanes: 2, minimumTokens: two.model.laneRunMinimumTokens)
    #expect(runs.contains { counts[$0].reduce(0, +) < BertModel.laneMinimumTokens })
    let expected = try await one.embed(texts)
    let found = try await two.embed(texts)
    #expect(found.count == texts.count)
    #expect(texts.indices.filter { found[$0] != expected[$0] } == [], "texts whose vectors differ")
  }

  @Test("e5-small: a batch embedded on lanes gets the vectors of one single-threaded pass, bit for bit")
  func e5LanesMatchOnePass() async throws {
    let two = try InstalledE5.embedder()
    let one = try E5Embedder(file: two.file, options: BertEmbedder.Options(threads: 1, precision: .float32))
    let texts = Self.turns(48)
    let expected = try await one.embed(texts)
    let found = try await two.embed(texts)
    #expect(found.count == texts.count)
    #expect(texts.indices.filter { found[$0] != expected[$0] } == [], "texts whose vectors differ")
  }
}
