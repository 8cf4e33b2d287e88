import EngramPostgres
import Foundation

// engram-bench SUITE [options] [--json]
// Each suite measures one layer; peers run beside it from the scripts in Benchmarks/.

let usage = """
  usage: engram-bench SUITE [options] [--json]

  ENGRAM_CPU_LEVEL=scalar|avx2|avx512 (neon on arm64) runs the kernels at that level;
  every report names the level it ran at (cpu_level).

  suites:
    store     insert throughput with FTS, FTS query latency, open time
    vectors   exact and int8 cosine top-k latency, recall, batch throughput
    embed     embedding throughput, query latency, load time (--model minilm|e5-small)
    locomo    retrieval quality on LoCoMo conversations (hit@k, MRR) and compaction
              (--model minilm|e5-small|hashing)
    multilingual  recall@3 per language and mode on the frozen Chinese/English
              paraphrase set (Benchmarks/data/multilingual-retrieval.jsonl)
              (--db-url URL: also on the PostgreSQL store, in the same run)
    agent     routing accuracy (rules, full router), date and calculator accuracy, agent turn latency
    answers   LoCoMo questions asked through the agent: replies that quote an evidence turn
    yesno     yes/no questions answered from memory: the verdict (yes, no, not sure) against a
              frozen set (--data Benchmarks/data/yesno-eval.jsonl)
    mixed     ranking across memories and turns: questions over a chat and remembered facts
              (--data Benchmarks/data/mixed-eval.jsonl, frozen; mixed-dev.jsonl to choose)
    rerank-train  fits the hybrid re-ranker on LoCoMo dev conversations (--conversations,
              --out Sources/Engram/Retrieval/Reranker+Trained.swift)
    scale     each engram command on a memory of --n turns, one process per command
    ingest    engram ingest of generated exports per format: turns/s, peak memory, re-ingest skip
    snapshot-open  open time with the vector snapshot against the embeddings table (--sizes)
    serve     many users in one `engram mcp --http --users` process against the single-user
              server (--users N --turns M --clients C --seconds S [--db-url URL] [--cache-mb MB]
              [--warm-up engines|sessions] [--dir DIR [--reuse]])
  """

// `--db-url` opens PostgreSQL stores by URI.
PostgresBackend.register()

let suites: [String: (inout BenchArguments) async throws -> (BenchReport, String)] = [
  "store": StoreSuite.run,
  "vectors": VectorsSuite.run,
  "embed": EmbedSuite.run,
  "locomo": LocomoSuite.run,
  "multilingual": MultilingualSuite.run,
  "agent": AgentSuite.run,
  "answers": AnswersSuite.run,
  "rerank-train": RerankTrainSuite.run,
  "scale": ScaleSuite.run,
  "ingest": IngestSuite.run,
  "snapshot-open": SnapshotOpenSuite.run,
  "serve": ServeSuite.run,
  "yesno": YesNoSuite.run,
  "mixed": MixedSuite.run,
]

let commandLine = Array(CommandLine.arguments.dropFirst())
guard let name = commandLine.first, name != "--help", name != "-h" else {
  print(usage)
  exit(commandLine.isEmpty ? 64 : 0)
}
guard let suite = suites[name] else {
  FileHandle.standardError.write(Data("engram-bench: unknown suite '\(name)'\n\(usage)\n".utf8))
  exit(64)
}
do {
  var arguments = try BenchArguments(Array(commandLine.dropFirst()))
  let json = arguments.flag("json")
  let level = try CPULevel.checked()
  var (report, title) = try await suite(&arguments)
  report.set("cpu_level", level)
  emit(report, title: title, json: json)
} catch let error as BenchError {
  FileHandle.standardError.write(Data("engram-bench: \(error.description)\n".utf8))
  exit(64)
} catch {
  FileHandle.standardError.write(Data("engram-bench \(name): \(error)\n".utf8))
  exit(1)
}
