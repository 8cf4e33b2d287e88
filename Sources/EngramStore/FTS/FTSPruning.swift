/// Exact pruning of a keyword search (MaxScore style): the same hits, scores and order as
/// ranking every row that matches any term, without ranking most of the rows that match
/// only common terms.
///
/// A query's terms are joined with OR, so a term held by a tenth of the memory (a speaker's
/// name: every turn is indexed with it) makes `engram_bm25` score a tenth of the rows. But a
/// term adds at most `idf * (k1 + 1)` to a row's score (its term frequency saturates; see
/// `FTSRank.termScore`), so a row whose terms' bounds sum to less than the k-th best score
/// cannot be among the best k. The search:
/// 1. counts each term's documents over the whole table (`engram_fts_counts`, the counts
///    `engram_bm25` itself would make; they are handed to it, so idf is unchanged);
/// 2. ranks the rows matching the rarest terms (`firstPass`), scoring all the query's
///    terms, and takes the k-th score, theta;
/// 3. if the other terms' bounds sum below theta, that is the answer; otherwise ranks the
///    rows holding a set of terms whose bounds reach theta (`clauses`): every row that can
///    score theta or more, so among them are the best k, in the same order.
/// When there are fewer than k rows in the first pass (a filter, a small table) or little to
/// save, the table is ranked whole, with the counts already made.
///
/// The restricted rankings keep the query's shape: `(clauses) AND (all terms)`, with
/// `engram_bm25` told to skip the clauses' phrases, so each row's score is the sum of the
/// same terms in the same order (bit for bit), and rows are visited in the same (rowid)
/// order, so ties at equal scores break the same way.
struct FTSPruning: Sendable {
  /// Below this many term matches in all (summed over the terms), the table is ranked whole.
  var minimumMatches: Int
  /// The first pass takes the rarest terms while their matches stay under
  /// `max(limit * firstPassPerHit, rows / firstPassFraction)` (and until there are `limit`).
  var firstPassPerHit: Int
  var firstPassFraction: Int64
  /// At most this many term sets in the second pass; more, and single terms are used.
  var maximumClauses: Int
  /// Whether searches filtered by session or time are pruned too. A selective filter leaves
  /// the first pass fewer than k rows (then the table is ranked as well, doing the work
  /// twice), and a filtered search ranks only the rows that pass its filter anyway.
  var prunesFilters: Bool
  /// A term's largest contribution as a multiple of its idf: `k1 + 1`. Only tests change it
  /// (to show that a smaller bound loses hits).
  var boundFactor: Double

  /// The engine's setting.
  static let standard = FTSPruning(
    minimumMatches: 2_000, firstPassPerHit: 8, firstPassFraction: 64, maximumClauses: 32,
    prunesFilters: false, boundFactor: FTSRank.k1 + 1)

  /// Relative slack on bounds against rounding: a term's real contribution lies below its
  /// bound by far more than this.
  static let slack = 1e-9

  /// The largest score a term found in `matching` of `rows` rows can add.
  func bound(rows: Int64, matching: Int64) -> Double {
    FTSRank.idf(rows: rows, matching: matching) * boundFactor
  }

  /// The first pass: the indexes of the rarest terms, taken while their summed document
  /// counts stay within the budget, and at least until they reach `limit`. Nil when that is
  /// every term (nothing to prune).
  func firstPass(counts: [Int64], limit: Int, rows: Int64) -> [Int]? {
    let budget = max(Int64(limit) * Int64(firstPassPerHit), rows / max(firstPassFraction, 1))
    let order = counts.indices.sorted { counts[$0] != counts[$1] ? counts[$0] < counts[$1] : $0 < $1 }
    var chosen: [Int] = []
    var total: Int64 = 0
    for index in order {
      guard total < Int64(limit) || total + counts[index] <= budget else { break }
      chosen.append(index)
      total += counts[index]
    }
    return chosen.count < counts.count ? chosen.sorted() : nil
  }

  /// Whether rows holding none of `chosen` all score below `theta`.
  static func othersBelow(_ theta: Double, bounds: [Double], chosen: [Int]) -> Bool {
    let set = Set(chosen)
    let others = bounds.indices.filter { !set.contains($0) }.reduce(0.0) { $0 + bounds[$1] }
    return others * (1 + slack) < theta
  }

  /// Sets of terms (indexes, ascending) such that every row whose terms' bounds sum to
  /// `theta` or more holds all the terms of at least one set. Minimal sets while there are at
  /// most `maximumClauses`, else single terms (the rarest ones, leaving out the common terms
  /// whose bounds together stay below theta). Nil when that is every term alone (nothing to
  /// prune).
  func clauses(bounds: [Double], theta: Double) -> [[Int]]? {
    let reaches = { (sum: Double) in sum * (1 + Self.slack) >= theta }
    // Larger bounds first: a set is emitted as soon as it reaches theta, so each emitted set
    // is the shortest prefix of its terms (in this order) that does; any set reaching theta
    // has such a prefix.
    let order = bounds.indices.sorted { bounds[$0] != bounds[$1] ? bounds[$0] > bounds[$1] : $0 < $1 }
    var suffixSums = [Double](repeating: 0, count: order.count + 1)
    for position in stride(from: order.count - 1, through: 0, by: -1) {
      suffixSums[position] = suffixSums[position + 1] + bounds[order[position]]
    }
    var found: [[Int]] = []
    var current: [Int] = []
    var overflow = false
    func extend(from start: Int, sum: Double) {
      guard !overflow else { return }
      for position in start..<order.count where !overflow {
        guard reaches(sum + suffixSums[position]) else { return }
        let total = sum + bounds[order[position]]
        current.append(order[position])
        if reaches(total) {
          found.append(current.sorted())
          if found.count > maximumClauses { overflow = true }
        } else {
          extend(from: position + 1, sum: total)
        }
        current.removeLast()
      }
    }
    extend(from: 0, sum: 0)
    if overflow {
      // Single terms: leave out the most common ones while their bounds sum below theta.
      let common = bounds.indices.sorted { bounds[$0] != bounds[$1] ? bounds[$0] < bounds[$1] : $0 > $1 }
      var sum = 0.0
      var left: Set<Int> = []
      for index in common {
        guard !reaches(sum + bounds[index]) else { break }
        sum += bounds[index]
        left.insert(index)
      }
      found = bounds.indices.filter { !left.contains($0) }.map { [$0] }
    }
    if found.isEmpty || (found.count == bounds.count && found.allSatisfy { $0.count == 1 }) { return nil }
    return found
  }

  /// The MATCH expression ranking the rows that hold all the terms of one of `clauses` by all
  /// of `terms`, and how many phrases `engram_bm25` must skip (the clauses' copies).
  static func expression(terms: [String], clauses: [[Int]]) -> (expression: String, skip: Int) {
    let restriction = clauses.map { clause in
      clause.count == 1 ? terms[clause[0]] : "(" + clause.map { terms[$0] }.joined(separator: " AND ") + ")"
    }
    let skip = clauses.reduce(0) { $0 + $1.count }
    return (
      "(" + restriction.joined(separator: " OR ") + ") AND (" + terms.joined(separator: " OR ") + ")", skip
    )
  }
}
