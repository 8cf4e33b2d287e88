import EngramAgent
import EngramEmbeddings
import Foundation

/// Plan accuracy on a frozen split of compound requests (`--compound FILE`, default
/// `Benchmarks/data/compound-eval.jsonl`; see `Benchmarks/data/compound-README.md`): a plan
/// is right when it has the gold skills in the gold order and each step the gold condition
/// (its kind and whether it is negated, or none). Reported beside it: the share of plans
/// with the right skills alone, of steps with the right earlier input (`input_from`), by
/// category and by language.
extension AgentSuite {
  struct GoldPlan: Decodable {
    struct Step: Decodable {
      struct Condition: Decodable {
        var kind: String
        var negated: Bool?
      }
      var skill: String
      var condition: Condition?
      var input_from: Int?
    }
    var id: String
    var text: String
    var lang: String
    var category: String
    var steps: [Step]
  }

  static func readPlans(_ path: String) throws -> [GoldPlan] {
    do {
      return try decodeJSONLines(GoldPlan.self, path: path)
    } catch let error as BenchError {
      throw error
    } catch {
      throw BenchError("cannot read the compound split \(path): \(error)")
    }
  }

  /// A write of the opposite kind for a request to forget, cancel or recall.
  static func isHarmfulInverse(gold: String, routed: String) -> Bool {
    let inverse: Set<String> = ["memory.forget", "reminder.cancel", "calendar.cancel", "memory.recall"]
    let writes: Set<String> = ["memory.remember", "reminder.create", "calendar.create", "note.create"]
    return inverse.contains(gold) && writes.contains(routed)
  }

  static func measurePlans(_ plans: [GoldPlan], embedder: any Embedder, clock: AgentClock) async throws
    -> BenchReport
  {
    let registry = SkillRegistry()
    try BuiltInSkills.register(in: registry)
    let skills = SkillRouter(registry: registry, embedding: EmbedderPhraseEmbedding(embedder))
    try await skills.prepareIndex()
    let router = TurnRouter(skills: skills)
    var correct = 0
    var skillsCorrect = 0
    var multiStep = 0
    var inputs = (correct: 0, total: 0)
    var byCategory: [String: (correct: Int, total: Int)] = [:]
    var byLanguage: [String: (correct: Int, total: Int)] = [:]
    var seconds: [Double] = []
    // The requests of two steps, for the time of a two-step plan against a single step's.
    var twoStepSeconds: [Double] = []
    progress("agent: planning \(plans.count) compound requests")
    for gold in plans {
      var route: TurnRoute?
      let elapsed = try await Measure.seconds { route = try await router.route(gold.text, clock: clock) }
      seconds.append(elapsed)
      if gold.steps.count == 2 { twoStepSeconds.append(elapsed) }
      let steps = route?.plan.steps ?? []
      if steps.count > 1 { multiStep += 1 }
      let sameSkills = steps.map(\.skill) == gold.steps.map(\.skill)
      let sameConditions =
        sameSkills
        && zip(steps, gold.steps).allSatisfy { step, goldStep in
          step.condition?.kind.rawValue == goldStep.condition?.kind
            && (goldStep.condition == nil
              || step.condition?.negated == (goldStep.condition?.negated ?? false))
        }
      if sameSkills {
        skillsCorrect += 1
        for (step, goldStep) in zip(steps, gold.steps) where goldStep.input_from != nil {
          inputs.total += 1
          if step.inputFrom == goldStep.input_from { inputs.correct += 1 }
        }
      }
      let right = sameConditions ? 1 : 0
      correct += right
      byCategory[gold.category, default: (0, 0)].correct += right
      byCategory[gold.category, default: (0, 0)].total += 1
      byLanguage[gold.lang, default: (0, 0)].correct += right
      byLanguage[gold.lang, default: (0, 0)].total += 1
    }
    var report = BenchReport()
    report.set("requests", plans.count)
    report.set("plan_accuracy", ratio(correct, plans.count))
    report.set("plan_skills_accuracy", ratio(skillsCorrect, plans.count))
    report.set("planned_multi_step", multiStep)
    report.set("input_accuracy", ratio(inputs.correct, inputs.total))
    report.set("input_items", inputs.total)
    func breakdown(_ counts: [String: (correct: Int, total: Int)]) -> BenchReport {
      var result = BenchReport()
      for key in counts.keys.sorted() {
        var entry = BenchReport()
        entry.set("plan_accuracy", ratio(counts[key]!.correct, counts[key]!.total))
        entry.set("n", counts[key]!.total)
        result.set(key, entry)
      }
      return result
    }
    report.set("by_category", breakdown(byCategory))
    report.set("by_language", breakdown(byLanguage))
    report.set("route_p50_ms", Measure.percentile(seconds, 0.5) * 1000)
    report.set("two_step_route_p50_ms", Measure.percentile(twoStepSeconds, 0.5) * 1000)
    return report
  }
}
