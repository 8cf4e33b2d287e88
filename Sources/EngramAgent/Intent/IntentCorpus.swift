/// The built-in intent corpus: labelled requests in English and Chinese for every built-in
/// skill and `none`, written from docs/requests.md. Its source is `intent-corpus.jsonl`
/// beside this file; `make corpus` compiles it into `IntentCorpus+Generated.swift`.
public enum IntentCorpus {
  /// Every example as (text, label).
  public static let examples: [(text: String, label: String)] = generated.split(separator: "\n").compactMap {
    line in
    let fields = line.split(separator: "\t", omittingEmptySubsequences: false)
    guard fields.count == 2, !fields[0].isEmpty, !fields[1].isEmpty else { return nil }
    return (String(fields[0]), String(fields[1]))
  }

  /// The classifier trained on `examples` once per process (a few tens of milliseconds).
  public static let classifier = IntentClassifier(examples: examples)
}
