import Engram
import Foundation

/// What the intent model says about one request.
public struct IntentPrediction: Sendable, Hashable {
  /// The most probable label: a skill id, or `IntentClassifier.noneLabel`.
  public var label: String
  /// Its probability (0...1).
  public var confidence: Double
  /// Every label's probability, most probable first.
  public var ranked: [(label: String, probability: Double)]
  /// The share of the request's words (and Chinese characters) the model was trained on:
  /// "blorp the frobnicator" is 1 of 3. A request it barely understands may still get a
  /// high probability from the few words it knows.
  public var knownWordFraction: Double = 1

  public static func == (lhs: IntentPrediction, rhs: IntentPrediction) -> Bool {
    lhs.label == rhs.label && lhs.confidence == rhs.confidence
  }

  public func hash(into hasher: inout Hasher) {
    hasher.combine(label)
    hasher.combine(confidence)
  }
}

/// A multinomial logistic regression over hashed word and character n-grams
/// (`IntentFeatures`): English and Chinese alike, no tokenizer vocabulary needed.
///
/// Trained in a few tens of milliseconds from labelled examples (the built-in corpus,
/// `IntentCorpus`), deterministically: the same examples give the same weights.
public struct IntentClassifier: Sendable {
  /// The label of requests no skill should take.
  public static let noneLabel = "none"

  /// The labels, in the order of the weight columns.
  public let labels: [String]
  /// weights[feature * labels.count + label].
  private let weights: [Float]

  /// How training runs. The defaults were chosen by cross-validation on the training corpus.
  public struct TrainingOptions: Sendable {
    /// Passes over the examples.
    public var epochs = 12
    /// The AdaGrad step size.
    public var learningRate: Float = 0.4
    /// L2 shrinkage applied to the weights an example touches.
    public var l2: Float = 1e-4
    /// Seed of the example order.
    public var seed: UInt64 = 0x5EED

    public init() {}
  }

  /// Trains on `examples` (text, label).
  /// - Complexity: O(epochs × examples × features per example × labels).
  public init(examples: [(text: String, label: String)], options: TrainingOptions = TrainingOptions()) {
    let labels = Array(Set(examples.map(\.label))).sorted()
    let labelIndex = Dictionary(uniqueKeysWithValues: labels.enumerated().map { ($1, $0) })
    let classes = labels.count
    let encoded = examples.map { (IntentFeatures.extract($0.text), labelIndex[$0.label]!) }
    var weights = [Float](repeating: 0, count: IntentFeatures.dimension * classes)
    var squared = [Float](repeating: 1e-6, count: IntentFeatures.dimension * classes)
    var order = Array(encoded.indices)
    var random = SplitMix64(seed: options.seed)
    var logits = [Float](repeating: 0, count: classes)
    weights.withUnsafeMutableBufferPointer { w in
      squared.withUnsafeMutableBufferPointer { g2 in
        for _ in 0..<options.epochs {
          order.shuffle(using: &random)
          for index in order {
            let (features, target) = encoded[index]
            let scale = 1 / Float(max(1, features.count)).squareRoot()
            Self.logits(
              features, scale: scale, weights: UnsafeBufferPointer(w), classes: classes, into: &logits)
            Self.softmax(&logits)
            for feature in features {
              let base = Int(feature) * classes
              for label in 0..<classes {
                let error = logits[label] - (label == target ? 1 : 0)
                let gradient = error * scale + options.l2 * w[base + label]
                g2[base + label] += gradient * gradient
                w[base + label] -= options.learningRate * gradient / g2[base + label].squareRoot()
              }
            }
          }
        }
      }
    }
    self.labels = labels
    self.weights = weights
  }

  /// The label probabilities for `text`.
  public func predict(_ text: String) -> IntentPrediction {
    guard !labels.isEmpty else {
      return IntentPrediction(label: Self.noneLabel, confidence: 0, ranked: [(Self.noneLabel, 0)])
    }
    let features = IntentFeatures.extract(text)
    var probabilities = [Float](repeating: 0, count: labels.count)
    weights.withUnsafeBufferPointer { w in
      Self.logits(
        features, scale: 1 / Float(max(1, features.count)).squareRoot(), weights: w, classes: labels.count,
        into: &probabilities)
    }
    Self.softmax(&probabilities)
    let ranked = zip(labels, probabilities.map(Double.init)).sorted {
      $0.1 != $1.1 ? $0.1 > $1.1 : $0.0 < $1.0
    }.map { (label: $0.0, probability: $0.1) }
    var prediction = IntentPrediction(
      label: ranked[0].label, confidence: ranked[0].probability, ranked: ranked)
    let words = IntentFeatures.wordFeatures(text)
    if !words.isEmpty {
      let known = weights.withUnsafeBufferPointer { w in
        words.filter { feature in
          let base = Int(feature) * labels.count
          return (0..<labels.count).contains { w[base + $0] != 0 }
        }.count
      }
      prediction.knownWordFraction = Double(known) / Double(words.count)
    }
    return prediction
  }

  private static func logits(
    _ features: [Int32], scale: Float, weights: UnsafeBufferPointer<Float>, classes: Int,
    into logits: inout [Float]
  ) {
    for label in 0..<classes { logits[label] = 0 }
    for feature in features {
      let base = Int(feature) * classes
      for label in 0..<classes { logits[label] += weights[base + label] * scale }
    }
  }

  private static func softmax(_ values: inout [Float]) {
    let top = values.max() ?? 0
    var total: Float = 0
    for index in values.indices {
      values[index] = exp(values[index] - top)
      total += values[index]
    }
    for index in values.indices { values[index] /= total }
  }
}
