import Dispatch
import Foundation
import Synchronization

extension BertModel {
  /// The fewest tokens a lane takes at once (unless fewer are left). BLAS packs each weight
  /// matrix again for every run: with runs of 256 tokens its copies took 11% of a MiniLM
  /// ingest's samples, against 7% with one group per thread (`perf record`).
  static let laneMinimumTokens = 512

  /// The most tokens a lane takes at once (unless one sequence is longer): a call of a whole
  /// ingest batch (256 turns, some 18,000 tokens) would otherwise start with runs of 4,500
  /// tokens, whose 70 MB of scratch is fresh memory to fault in and whose activations leave
  /// the core's cache between products.
  static let laneMaximumTokens = 1024

  /// The fewest tokens of a lane's run at int8, where the products take packed weights (no
  /// BLAS packing per run) and a row's vector does not depend on the rows beside it: the runs
  /// shrink towards a call's end down to about this, so the lane that finishes first waits
  /// for a short run, not one of up to twice `laneMinimumTokens` (an e5-small ingest's
  /// calls each left a core idle for 0.05-0.15 s at their end, `perf sched`).
  static let laneTailMinimumTokens = 96

  /// The fewest tokens of a run at this model's precision (see `laneTailMinimumTokens`).
  var laneRunMinimumTokens: Int {
    precision == .int8 ? Self.laneTailMinimumTokens : Self.laneMinimumTokens
  }

  /// Sentence vectors of `sequences` (already validated), in order, in runs of at most
  /// `maxTokens` tokens (a longer sequence runs alone).
  ///
  /// With `threads` > 1 and enough tokens, the sequences run on `threads` lanes: each lane
  /// takes the next run of sequences (a `2 · threads`th of the tokens left, at least
  /// `laneMinimumTokens`, at most `laneMaximumTokens` and `maxTokens`) and runs a whole single-threaded forward pass
  /// over it, until none are left. Lanes never wait for each other between runs, a lane whose
  /// core is taken by another process leaves more runs to the others, and the caller waits for
  /// the last run blocked, not spinning: splitting the pass into one fixed group per thread
  /// (`sentenceVectors`) left one thread spinning while the other finished its group (14% of
  /// the CPU samples of a MiniLM ingest). The lanes span the whole call, not one pass of
  /// `maxTokens`: a core waits for the other only at the call's last run. Otherwise (one
  /// sequence, one thread, fewer than `2 · laneMinimumTokens` tokens) this is
  /// `sentenceVectors(_:threads:normalizes:)` over passes of at most `maxTokens` tokens, whose
  /// single sequence splits its products instead.
  ///
  /// A row's vector does not depend on the run it is computed in: attention runs per
  /// sequence, every other step per row, and a run of at least `laneMinimumTokens` rows
  /// takes the same products (BLAS, or the int8 tile) as the whole pass would.
  func vectors(_ sequences: [[Int32]], threads: Int, normalizes: Bool, maxTokens: Int = .max) -> [[Float]] {
    let counts = sequences.map(\.count)
    let lanes = min(threads, counts.reduce(0, +) / Self.laneMinimumTokens, sequences.count)
    guard lanes > 1 else {
      return Self.passes(counts, maxTokens: maxTokens).flatMap { pass in
        sentenceVectors(Array(sequences[pass]), threads: threads, normalizes: normalizes)
      }
    }
    let state = LaneState(
      counts: counts, lanes: lanes, maxTokens: maxTokens, minimumTokens: laneRunMinimumTokens)
    let run: @Sendable () -> Void = { [self] in
      while let range = state.claim() {
        let vectors = sentenceVectors(Array(sequences[range]), threads: 1, normalizes: normalizes)
        state.results.withLock { $0[range.lowerBound] = vectors }
      }
    }
    let done = DispatchSemaphore(value: 0)
    for _ in 1..<lanes {
      Thread.detachNewThread {
        run()
        done.signal()
      }
    }
    run()
    for _ in 1..<lanes { done.wait() }
    return state.results.withLock { results in
      results.keys.sorted().flatMap { results[$0]! }
    }
  }

  /// Cuts `counts` (in order) into passes of at most `maxTokens` tokens (a longer sequence
  /// runs alone).
  static func passes(_ counts: [Int], maxTokens: Int) -> [Range<Int>] {
    var passes: [Range<Int>] = []
    var start = 0
    while start < counts.count {
      var end = start
      var tokens = 0
      while end < counts.count, end == start || tokens + counts[end] <= maxTokens {
        tokens += counts[end]
        end += 1
      }
      passes.append(start..<end)
      start = end
    }
    return passes
  }

  /// The runs of sequences not yet taken, and the vectors of those done (by first sequence).
  final class LaneState: Sendable {
    /// Tokens before each sequence, and in all (`counts.count + 1` entries).
    let before: [Int]
    let lanes: Int
    /// Most tokens in a run (a longer sequence runs alone).
    let maxTokens: Int
    /// Fewest tokens in a run (unless fewer are left).
    let minimumTokens: Int
    /// The first sequence not taken.
    let next = Mutex(0)
    let results = Mutex([Int: [[Float]]]())

    init(counts: [Int], lanes: Int, maxTokens: Int = .max, minimumTokens: Int = BertModel.laneMinimumTokens) {
      var before = [0]
      before.reserveCapacity(counts.count + 1)
      for count in counts { before.append(before[before.count - 1] + count) }
      self.before = before
      self.lanes = lanes
      self.maxTokens = maxTokens
      self.minimumTokens = minimumTokens
    }

    /// The next run: sequences from the first not taken until they hold a `2 · lanes`th of
    /// the tokens left (at most `laneMaximumTokens`), or `minimumTokens` if that is more,
    /// but not past `maxTokens`; the
    /// rest with it when fewer than `minimumTokens` would be left and all fit in `maxTokens`.
    func claim() -> Range<Int>? {
      next.withLock { next -> Range<Int>? in
        let count = before.count - 1
        guard next < count else { return nil }
        let total = before[count]
        let left = total - before[next]
        let wanted = max(minimumTokens, min(left / (2 * lanes), BertModel.laneMaximumTokens))
        var end = next + 1
        while end < count, before[end] - before[next] < wanted, before[end + 1] - before[next] <= maxTokens {
          end += 1
        }
        if total - before[end] < minimumTokens, left <= maxTokens { end = count }
        defer { next = end }
        return next..<end
      }
    }
  }
}
