import EngramStore
import Foundation

/// The ranking function of hybrid search: pure (no I/O, no clock), so every term is
/// unit-tested on its own.
///
/// Hybrid mode normalizes each retriever's scores to 0...1 over its candidates (min-max)
/// and fuses them with `RetrievalWeights.vectorWeight`; then a turn gains a share of its
/// best neighbouring turn's fused score (answers follow questions), turns spoken by the one
/// known speaker the query names gain `speakerWeight`, a memory's score is scaled by the most
/// those two terms can add to a turn (it has neither neighbours nor a speaker, and would
/// otherwise lose to the chat around what it states), and recency and importance weights
/// apply. Vector and keyword modes rank by their retriever's raw score. Ties break by kind,
/// then id, so results are deterministic.
enum Fusion {
  /// One candidate's scores on its way to becoming a hit.
  struct Ranked: Equatable {
    var row: CandidateRow
    var bm25: Double?
    var cosine: Double?
    var score: Double
    var neighbour = false
    var speaker = false

    var key: Int64 { VectorKey.make(row.kind, row.id) }
  }

  /// What a search asks of the ranking.
  struct Request {
    var mode: SearchMode
    var weights: RetrievalWeights
    /// The one known speaker the query names (lowercased), if any.
    var namedSpeaker: String?
    var filters: SearchFilters
    var k: Int
    /// The time recency is measured from.
    var now: Date
  }

  /// Fuses the retrievers' scores (keyed by `VectorKey`), adds the neighbour, speaker,
  /// recency and importance terms, drops what the filters exclude, and returns the best
  /// `k`, best first.
  /// - Complexity: O(n·k) for k up to 32 (insertion), else O(n log n); n = rows.
  static func rank(
    rows: [CandidateRow], cosine: [Int64: Double], bm25: [Int64: Double], request: Request
  ) -> [Ranked] {
    // Candidates the filters leave out (superseded, another scope, an excluded session) take
    // no part: the scores are normalized over the admitted ones only.
    // (Nothing left out, the usual search: the scores as found.)
    let admitted = rows.filter { admits($0, request.filters) }
    var scoresOfAdmitted = (cosine: cosine, bm25: bm25)
    if admitted.count < rows.count {
      let keys = Set(admitted.map { VectorKey.make($0.kind, $0.id) })
      scoresOfAdmitted = (cosine.filter { keys.contains($0.key) }, bm25.filter { keys.contains($0.key) })
    }
    let fused = fuse(
      cosine: scoresOfAdmitted.cosine, bm25: scoresOfAdmitted.bm25, mode: request.mode,
      vectorWeight: request.weights.vectorWeight)
    let k = request.k
    var best: [Ranked] = []
    best.reserveCapacity(min(k, insertionLimit) + 1)
    for row in admitted {
      let key = VectorKey.make(row.kind, row.id)
      guard let base = fused[key] else { continue }
      var candidate = Ranked(row: row, bm25: bm25[key], cosine: cosine[key], score: base)
      if request.mode == .hybrid { addTerms(&candidate, fused: fused, request: request) }
      if k > insertionLimit {
        best.append(candidate)
        continue
      }
      // Keep the best k in order: a linear insertion beats sorting every candidate.
      if best.count == k, !precedes(candidate, best[k - 1]) { continue }
      best.insert(candidate, at: best.firstIndex { precedes(candidate, $0) } ?? best.count)
      if best.count > k { best.removeLast() }
    }
    if k > insertionLimit {
      best.sort(by: precedes)
      if best.count > k { best.removeSubrange(k...) }
    }
    return best
  }

  /// The fused score of every candidate key: the raw score in vector or keyword mode, the
  /// weighted sum of min-max normalized scores in hybrid mode (a retriever that did not
  /// find a candidate contributes 0).
  static func fuse(
    cosine: [Int64: Double], bm25: [Int64: Double], mode: SearchMode, vectorWeight: Double
  ) -> [Int64: Double] {
    switch mode {
    case .vector: return cosine
    case .keyword: return bm25
    case .hybrid:
      let normalizedCosine = minMax(cosine)
      let normalizedBM25 = minMax(bm25)
      var scores: [Int64: Double] = [:]
      scores.reserveCapacity(cosine.count + bm25.count)
      for key in Set(cosine.keys).union(bm25.keys) {
        scores[key] =
          vectorWeight * (normalizedCosine[key] ?? 0) + (1 - vectorWeight) * (normalizedBM25[key] ?? 0)
      }
      return scores
    }
  }

  /// Whether the filters that need the row (superseded, excluded sessions, scope) let it in.
  static func admits(_ row: CandidateRow, _ filters: SearchFilters) -> Bool {
    if row.superseded && !filters.includeSuperseded { return false }
    if let session = row.sessionID, filters.excludedSessions.contains(session) { return false }
    if let scope = filters.scopeUser, row.kind == .memory, row.scopeUser != scope { return false }
    return true
  }

  /// Adds the hybrid terms, in a fixed order so scores are the same bit for bit whatever
  /// order the rows come in.
  static func addTerms(_ candidate: inout Ranked, fused: [Int64: Double], request: Request) {
    let row = candidate.row
    let weights = request.weights
    if weights.neighbourWeight > 0 && row.kind == .message {
      var adjacentBest: Double?
      for adjacent in [row.previous, row.next] {
        guard let adjacent, let score = fused[VectorKey.make(.message, adjacent)] else { continue }
        adjacentBest = max(adjacentBest ?? score, score)
      }
      if let adjacentBest, adjacentBest > 0 {
        candidate.score += weights.neighbourWeight * adjacentBest
        candidate.neighbour = true
      }
    }
    // A memory stands alone: it has no neighbouring turn and no speaker to gain from, so its
    // score is put on the turns' scale (times the most those two terms can add to a turn).
    if row.kind == .memory {
      candidate.score *=
        1 + weights.neighbourWeight + (request.namedSpeaker != nil ? weights.speakerWeight : 0)
    }
    if let named = request.namedSpeaker, row.kind == .message, row.speaker?.lowercased() == named {
      candidate.score += weights.speakerWeight
      candidate.speaker = true
    }
    if weights.recencyWeight > 0 {
      let age = max(0, request.now.timeIntervalSince(row.timestamp))
      candidate.score += weights.recencyWeight * pow(0.5, age / weights.recencyHalfLife)
    }
    if weights.importanceWeight > 0 && row.kind == .memory {
      candidate.score += weights.importanceWeight * (row.importance ?? 0)
    }
  }

  /// Up to this k, `rank` keeps its best k by insertion; beyond, it sorts.
  static let insertionLimit = 32

  /// Best first: higher score, then lower kind code, then lower id (a total order, so the
  /// ranking is deterministic).
  static func precedes(_ a: Ranked, _ b: Ranked) -> Bool {
    if a.score != b.score { return a.score > b.score }
    if a.row.kind.code != b.row.kind.code { return a.row.kind.code < b.row.kind.code }
    return a.row.id < b.row.id
  }

  /// Min-max normalization to 0...1 over the candidates of one retriever (all 1 when equal).
  static func minMax(_ scores: [Int64: Double]) -> [Int64: Double] {
    guard let low = scores.values.min(), let high = scores.values.max() else { return [:] }
    let span = high - low
    return scores.mapValues { span > 0 ? ($0 - low) / span : 1 }
  }

  /// The one known speaker whose name `query` contains as a word (lowercased), or nil when
  /// it names none or several. `known` maps lowercased names to names as written.
  static func namedSpeaker(in query: String, known: [String: String]) -> String? {
    guard !known.isEmpty else { return nil }
    let words = Set(
      query.lowercased().split { !$0.isLetter && !$0.isNumber && $0 != "'" }.map {
        String($0.hasSuffix("'s") ? $0.dropLast(2) : $0)
      })
    let named = known.keys.filter { words.contains($0) }
    return named.count == 1 ? named[0] : nil
  }
}
