import CBLAS
import CEngramKernels

extension BertModel {
  /// Scratch memory for one forward pass over `tokens` packed tokens, allocated once per call.
  ///
  /// Sequences are packed back to back with no padding: the dense layers see one
  /// `tokens × width` matrix, and attention runs per sequence on its own rows, which is what
  /// a padding mask computes, without the wasted rows.
  final class Workspace {
    let storage: UnsafeMutablePointer<Float>
    let hidden: UnsafeMutablePointer<Float>
    let query: UnsafeMutablePointer<Float>
    let key: UnsafeMutablePointer<Float>
    let value: UnsafeMutablePointer<Float>
    let context: UnsafeMutablePointer<Float>
    let projected: UnsafeMutablePointer<Float>
    let intermediate: UnsafeMutablePointer<Float>
    let scores: UnsafeMutablePointer<Float>

    init(tokens: Int, longest: Int, width: Int, innerWidth: Int) {
      let block = tokens * width
      let total = 6 * block + tokens * innerWidth + longest * longest
      storage = .allocate(capacity: total)
      hidden = storage
      query = storage + block
      key = storage + 2 * block
      value = storage + 3 * block
      context = storage + 4 * block
      projected = storage + 5 * block
      intermediate = storage + 6 * block
      scores = intermediate + tokens * innerWidth
    }

    deinit { storage.deallocate() }
  }

  /// Sentence vectors (pooled, L2-normalized) of already validated token-id sequences, in order.
  ///
  /// - Complexity: O(L · (T · w² + Σ nᵢ² · w)) for T tokens in all, sequence lengths nᵢ, width w.
  func sentenceVectors(_ sequences: [[Int32]]) -> [[Float]] {
    let width = configuration.hiddenSize
    let tokens = sequences.reduce(0) { $0 + $1.count }
    let longest = sequences.map(\.count).max() ?? 0
    guard tokens > 0 else { return sequences.map { _ in [Float](repeating: 0, count: width) } }
    let space = Workspace(
      tokens: tokens, longest: longest, width: width, innerWidth: configuration.intermediateSize)
    embed(sequences, into: space.hidden)
    for layer in layers {
      encode(layer, sequences: sequences, tokens: tokens, space: space)
    }
    return pool(sequences, space.hidden)
  }

  /// Word + position + token-type (0) embeddings, then LayerNorm.
  private func embed(_ sequences: [[Int32]], into hidden: UnsafeMutablePointer<Float>) {
    let width = configuration.hiddenSize
    var row = 0
    for sequence in sequences {
      for (position, id) in sequence.enumerated() {
        let x = hidden + row * width
        let word = wordEmbeddings + Int(id) * width
        let place = positionEmbeddings + position * width
        for index in 0..<width { x[index] = word[index] + place[index] + tokenTypeEmbeddings[index] }
        row += 1
      }
    }
    VectorMath.addLayerNorm(
      hidden, nil, into: hidden, rows: row, width: width, gamma: embeddingNormGamma, beta: embeddingNormBeta,
      epsilon: configuration.layerNormEpsilon)
  }

  /// Up to this many rows, products with a weight matrix skip BLAS: sgemm packs the whole
  /// weight matrix on every call, which for a short query costs more than the product
  /// (`engram_gemm_nt_small` streams the weights once, unpacked). Above it, packing pays.
  static let smallProductRows = 24

  /// `output = input · weightᵀ + bias` for `rows` rows; weights are stored [out, in].
  private func linear(
    _ input: UnsafePointer<Float>, rows: Int, inputWidth: Int, weight: UnsafePointer<Float>,
    bias: UnsafePointer<Float>, outputWidth: Int, into output: UnsafeMutablePointer<Float>
  ) {
    if rows <= Self.smallProductRows {
      engram_gemm_nt_small(
        rows, outputWidth, inputWidth, 1, input, inputWidth, weight, inputWidth, output, outputWidth)
    } else {
      cblas_sgemm(
        CblasRowMajor, CblasNoTrans, CblasTrans, Int32(rows), Int32(outputWidth), Int32(inputWidth), 1,
        input, Int32(inputWidth), weight, Int32(inputWidth), 0, output, Int32(outputWidth))
    }
    VectorMath.addBias(output, rows: rows, width: outputWidth, bias: bias)
  }

  private func encode(_ layer: Layer, sequences: [[Int32]], tokens: Int, space: Workspace) {
    let width = configuration.hiddenSize
    let inner = configuration.intermediateSize
    let epsilon = configuration.layerNormEpsilon
    let hidden = space.hidden
    linear(
      hidden, rows: tokens, inputWidth: width, weight: layer.query, bias: layer.queryBias, outputWidth: width,
      into: space.query)
    linear(
      hidden, rows: tokens, inputWidth: width, weight: layer.key, bias: layer.keyBias, outputWidth: width,
      into: space.key)
    linear(
      hidden, rows: tokens, inputWidth: width, weight: layer.value, bias: layer.valueBias, outputWidth: width,
      into: space.value)
    attend(sequences, space: space)
    linear(
      space.context, rows: tokens, inputWidth: width, weight: layer.attentionOutput,
      bias: layer.attentionOutputBias, outputWidth: width, into: space.projected)
    VectorMath.addLayerNorm(
      space.projected, hidden, into: hidden, rows: tokens, width: width, gamma: layer.attentionNormGamma,
      beta: layer.attentionNormBeta, epsilon: epsilon)
    linear(
      hidden, rows: tokens, inputWidth: width, weight: layer.intermediate, bias: layer.intermediateBias,
      outputWidth: inner, into: space.intermediate)
    VectorMath.geluInPlace(space.intermediate, count: tokens * inner)
    linear(
      space.intermediate, rows: tokens, inputWidth: inner, weight: layer.output, bias: layer.outputBias,
      outputWidth: width, into: space.projected)
    VectorMath.addLayerNorm(
      space.projected, hidden, into: hidden, rows: tokens, width: width, gamma: layer.outputNormGamma,
      beta: layer.outputNormBeta, epsilon: epsilon)
  }

  /// Scaled dot-product attention of every head of every sequence into `space.context`.
  private func attend(_ sequences: [[Int32]], space: Workspace) {
    let width = configuration.hiddenSize
    let heads = configuration.headCount
    let headWidth = width / heads
    let scale = 1 / Float(headWidth).squareRoot()
    let stride = Int32(width)
    var start = 0
    for sequence in sequences {
      let n = sequence.count
      let length = Int32(n)
      for head in 0..<heads {
        let offset = start * width + head * headWidth
        if n <= Self.smallProductRows {
          engram_gemm_nt_small(
            n, n, headWidth, scale, space.query + offset, width, space.key + offset, width, space.scores, n)
        } else {
          cblas_sgemm(
            CblasRowMajor, CblasNoTrans, CblasTrans, length, length, Int32(headWidth), scale,
            space.query + offset, stride, space.key + offset, stride, 0, space.scores, length)
        }
        for row in 0..<n { VectorMath.softmaxInPlace(space.scores + row * n, count: n) }
        cblas_sgemm(
          CblasRowMajor, CblasNoTrans, CblasNoTrans, length, Int32(headWidth), length, 1,
          space.scores, length, space.value + offset, stride, 0, space.context + offset, stride)
      }
      start += n
    }
  }

  /// Pools each sequence's rows into one vector and scales it to unit length.
  private func pool(_ sequences: [[Int32]], _ hidden: UnsafePointer<Float>) -> [[Float]] {
    let width = configuration.hiddenSize
    var vectors: [[Float]] = []
    vectors.reserveCapacity(sequences.count)
    var start = 0
    for sequence in sequences {
      let n = sequence.count
      var vector = [Float](repeating: 0, count: width)
      vector.withUnsafeMutableBufferPointer { out in
        switch configuration.pooling {
        case .mean:
          for row in start..<(start + n) {
            let x = hidden + row * width
            for index in 0..<width { out[index] += x[index] }
          }
          let inverse = 1 / Float(n)
          for index in 0..<width { out[index] *= inverse }
        case .classToken:
          for index in 0..<width { out[index] = hidden[start * width + index] }
        }
        var squares: Float = 0
        for index in 0..<width { squares += out[index] * out[index] }
        let inverseNorm = 1 / max(squares.squareRoot(), 1e-12)
        for index in 0..<width { out[index] *= inverseNorm }
      }
      vectors.append(vector)
      start += n
    }
    return vectors
  }
}
