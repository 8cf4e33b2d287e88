import CEngramKernels
import Synchronization

// BLAS: Accelerate on Apple platforms (untested: this project builds and tests on Linux only),
// OpenBLAS elsewhere.
#if canImport(Accelerate)
  import Accelerate
#else
  import CBLAS
#endif

extension BertModel {
  /// Scratch memory for one forward pass over `tokens` packed tokens, allocated once per call.
  ///
  /// Sequences are packed back to back with no padding: the dense layers see one
  /// `tokens × width` matrix, and attention runs per sequence on its own rows, which is what
  /// a padding mask computes, without the wasted rows.
  ///
  /// Sendable so that the threads of one pass can share it: each writes its own columns,
  /// heads or score matrix, and the pass waits for all of them before reading.
  final class Workspace: @unchecked Sendable {
    let storage: UnsafeMutablePointer<Float>
    let hidden: UnsafeMutablePointer<Float>
    let query: UnsafeMutablePointer<Float>
    let key: UnsafeMutablePointer<Float>
    let value: UnsafeMutablePointer<Float>
    let context: UnsafeMutablePointer<Float>
    let projected: UnsafeMutablePointer<Float>
    let intermediate: UnsafeMutablePointer<Float>
    let scores: UnsafeMutablePointer<Float>
    /// A product's input quantized per row (int8 path, `engram_quantize_rows_mixed`): the rows
    /// at one pass first, one code row each, then the rows at two passes, two code rows each;
    /// code rows `codeStride` apart.
    let codes: UnsafeMutablePointer<Int8>
    let codeStride: Int
    /// The scale of each quantized row, in the order of `codes`.
    let codeScales: UnsafeMutablePointer<Float>
    /// The input row of each quantized row.
    let codeOrder: UnsafeMutablePointer<Int32>
    /// Per input row, the crest factor above which it takes two passes (see `linear`).
    let crestLimits: UnsafeMutablePointer<Float>
    /// Per input row, whether it takes two passes at every product (its sequence is short).
    let twoPassRows: UnsafeMutablePointer<Bool>
    /// How many rows of the last quantized input took one pass, and whether `codeOrder` is
    /// needed (false: every row at one pass, in order). Written before a product's threads start.
    var singleRows = 0
    var reordered = false
    /// Observes the products' inputs when set (`ActivationProbe`): calibration and tests.
    let probe: ActivationProbe?
    /// Per thread that runs attention heads, `attentionStride` floats of scratch for
    /// `engram_attention_head`.
    let attentionScratch: UnsafeMutablePointer<Float>
    let attentionStride: Int

    /// `threads` score matrices, one per thread that runs attention heads; `quantized` adds
    /// room for a product's input as int8 codes.
    init(
      tokens: Int, longest: Int, width: Int, innerWidth: Int, headWidth: Int, threads: Int = 1,
      quantized: Bool = false, probe: ActivationProbe? = nil
    ) {
      self.probe = probe
      let block = tokens * width
      let total = 6 * block + tokens * innerWidth + threads * longest * longest
      // Padded for the largest weight group (128): code rows end in zeros up to the stride.
      codeStride = quantized ? engram_qgemm_padded_inputs_grouped(max(width, innerWidth), 128) : 0
      codes = .allocate(capacity: 2 * tokens * codeStride)
      let rows = quantized ? tokens : 0
      codeScales = .allocate(capacity: rows)
      codeOrder = .allocate(capacity: rows)
      crestLimits = .allocate(capacity: rows)
      twoPassRows = .allocate(capacity: rows)
      attentionStride = engram_attention_scratch(longest, headWidth)
      attentionScratch = .allocate(capacity: threads * attentionStride)
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

    deinit {
      storage.deallocate()
      codes.deallocate()
      codeScales.deallocate()
      codeOrder.deallocate()
      crestLimits.deallocate()
      twoPassRows.deallocate()
      attentionScratch.deallocate()
    }
  }

  /// Sentence vectors (pooled, L2-normalized) of already validated token-id sequences, in order.
  ///
  /// With `threads` > 1, several sequences are split into groups of about equal token counts
  /// that run whole forward passes side by side (one synchronization per pass); a single
  /// sequence instead splits every product's output columns and the attention heads.
  /// - Complexity: O(L · (T · w² + Σ nᵢ² · w)) for T tokens in all, sequence lengths nᵢ, width w.
  ///
  /// With `normalizes` false the pooled vectors are returned as they are (the windows of a
  /// long text are averaged before they are normalized).
  func sentenceVectors(_ sequences: [[Int32]], threads: Int = 1, normalizes: Bool = true) -> [[Float]] {
    let groups = Self.balancedGroups(sequences.map(\.count), parts: threads)
    guard groups.count > 1 else { return forward(sequences, threads: threads, normalizes: normalizes) }
    let results = Mutex([[[Float]]](repeating: [], count: groups.count))
    Self.parallel(groups.count) { part in
      let vectors = forward(Array(sequences[groups[part]]), threads: 1, normalizes: normalizes)
      results.withLock { $0[part] = vectors }
    }
    return results.withLock { $0.flatMap { $0 } }
  }

  /// Splits `counts` (in order) into at most `parts` contiguous groups of about equal sum.
  static func balancedGroups(_ counts: [Int], parts: Int) -> [Range<Int>] {
    let parts = min(parts, counts.count)
    guard parts > 1 else { return [0..<counts.count] }
    let total = counts.reduce(0, +)
    var groups: [Range<Int>] = []
    var start = 0
    var running = 0
    for (index, count) in counts.enumerated() {
      running += count
      let remainingGroups = parts - groups.count - 1
      let remainingItems = counts.count - index - 1
      if remainingGroups > 0,
        running * parts >= total * (groups.count + 1) || remainingItems == remainingGroups
      {
        groups.append(start..<(index + 1))
        start = index + 1
      }
    }
    if start < counts.count { groups.append(start..<counts.count) }
    return groups
  }

  /// One forward pass over all `sequences` packed together, its products split `threads` ways;
  /// `probe`, when given, observes the inputs of the products (on one thread only).
  func forward(
    _ sequences: [[Int32]], threads: Int, normalizes: Bool, probe: ActivationProbe? = nil
  ) -> [[Float]] {
    precondition(probe == nil || threads == 1)
    let width = configuration.hiddenSize
    let tokens = sequences.reduce(0) { $0 + $1.count }
    let longest = sequences.map(\.count).max() ?? 0
    guard tokens > 0 else { return sequences.map { _ in [Float](repeating: 0, count: width) } }
    let space = Workspace(
      tokens: tokens, longest: longest, width: width, innerWidth: configuration.intermediateSize,
      headWidth: width / configuration.headCount, threads: threads, quantized: precision == .int8,
      probe: probe)
    if precision == .int8 {
      var row = 0
      for sequence in sequences {
        for _ in sequence {
          space.twoPassRows[row] = sequence.count <= Self.twoPassLength
          row += 1
        }
      }
    }
    embed(sequences, into: space.hidden)
    for (index, layer) in layers.enumerated() {
      encode(layer, index: index, sequences: sequences, tokens: tokens, space: space, threads: threads)
    }
    return pool(sequences, space.hidden, normalizes: normalizes)
  }

  /// Word + position + token-type (0) embeddings, then LayerNorm.
  private func embed(_ sequences: [[Int32]], into hidden: UnsafeMutablePointer<Float>) {
    let width = configuration.hiddenSize
    var row = 0
    for sequence in sequences {
      for (position, id) in sequence.enumerated() {
        let x = hidden + row * width
        switch wordEmbeddings {
        case .float32(let table):
          x.update(from: table + Int(id) * width, count: width)
        case .blocks(let table):
          let rowBytes = width / E5ModelFile.blockLength * E5ModelFile.blockBytes
          E5ModelFile.dequantize(table + Int(id) * rowBytes, count: width, into: x)
        }
        let place = positionEmbeddings + position * width
        for index in 0..<width { x[index] = x[index] + place[index] + tokenTypeEmbeddings[index] }
        row += 1
      }
    }
    engram_add_layer_norm(
      hidden, nil, hidden, row, width, embeddingNormGamma, embeddingNormBeta, configuration.layerNormEpsilon)
  }

  /// Up to this many rows, products with a weight matrix skip BLAS: sgemm packs the whole
  /// weight matrix on every call, which for a short query costs more than the product
  /// (`engram_gemm_nt_small` streams the weights once, unpacked). Above it, packing pays.
  ///
  /// Debug builds compile the C kernels unoptimized, where the small product runs some 10x
  /// slower than BLAS (a prebuilt, optimized library); there every product goes to BLAS, so
  /// the parity tests stay fast. `SmallProductTests` and `KernelDispatchTests` check the
  /// small product itself against its definition at every SIMD level.
  #if DEBUG
    static let smallProductRows = 0
  #else
    static let smallProductRows = 24
  #endif

  /// Below this many multiply-adds a product is not split across threads: waking a second
  /// thread costs more than it saves.
  static let minimumParallelWork = 200_000

  /// Runs `body(part)` for `part` in `0..<parts`, concurrently when `parts` > 1, on
  /// `engram_parallel`'s spinning pool: a region here lasts about 100 µs, and a Dispatch
  /// wake-up costs a fifth of that.
  static func parallel(_ parts: Int, _ body: @Sendable (Int) -> Void) {
    guard parts > 1 else { return body(0) }
    withoutActuallyEscaping(body) { body in
      var task = body
      withUnsafeMutablePointer(to: &task) { pointer in
        engram_parallel(
          Int32(parts),
          { context, part in
            context!.assumingMemoryBound(to: (@Sendable (Int) -> Void).self).pointee(Int(part))
          }, pointer)
      }
    }
  }

  /// `items.map(transform)`, with the items cut into contiguous parts that run side by side
  /// (on `parallel`) when there are at least `minimumItems` and `threads` > 1: the embedders
  /// tokenize an ingest batch this way, which on one thread left the other cores idle before
  /// every pass. There are `partsPerThread` parts a thread, claimed as threads come free, so a
  /// thread that starts late or gets the longer texts does not leave the others waiting at the
  /// end (with one part a thread, e5-small's tokenization of an ingest batch ended with one
  /// core idle for 10-30 ms, `perf sched`).
  static func map<Item: Sendable, Result: Sendable>(
    _ items: [Item], threads: Int, minimumItems: Int = 32, _ transform: @Sendable (Item) -> Result
  ) -> [Result] {
    let parts = items.count >= minimumItems && threads > 1 ? min(threads * partsPerThread, items.count) : 1
    guard parts > 1 else { return items.map(transform) }
    let results = Mutex([[Result]](repeating: [], count: parts))
    parallel(parts) { part in
      let slice = items[(items.count * part / parts)..<(items.count * (part + 1) / parts)]
      let mapped = slice.map(transform)
      results.withLock { $0[part] = mapped }
    }
    return results.withLock { $0.flatMap { $0 } }
  }

  /// The parts of `map` per thread.
  static let partsPerThread = 4

  /// How many parts a product of `work` multiply-adds is split into.
  private static func parts(work: Int, threads: Int) -> Int {
    threads > 1 && work >= minimumParallelWork ? threads : 1
  }

  /// The output columns of part `part` of `parts`, in multiples of 16.
  private static func columns(_ width: Int, part: Int, parts: Int) -> Range<Int> {
    let step = ((width + parts - 1) / parts + 15) & ~15
    let start = min(width, part * step)
    return start..<min(width, start + step)
  }

  /// A pointer shared by the threads of one pass (see `Workspace`).
  struct Shared<Pointee>: @unchecked Sendable {
    let pointer: UnsafeMutablePointer<Pointee>
  }

  /// Above this crest factor (largest magnitude over root mean square, measured on its one-pass
  /// codes) a row of the query, key, value or feed-forward input takes two int8 passes. BERT's
  /// `[CLS]` rows carry one channel some 20 times the rest (crest factor 18 to 19.5, of at most
  /// √384, at every layer of MiniLM): at one pass their other channels keep about 6 levels.
  /// About one row in nine of the fixtures' texts crosses it. See `docs/benchmarks.md`.
  static let twoPassCrest: Float = 10

  /// The same for the input of the feed-forward output projection (GELU outputs, whose crest
  /// factors run higher: a median of 8 to 16 by layer, 38 on `[CLS]` rows); one row in twenty.
  static let twoPassCrestAfterGELU: Float = 16

  /// Sequences of at most this many tokens take two passes on every row: mean pooling averages
  /// the rows' quantization errors away only over many tokens (MiniLM at one pass: cosine 0.9974
  /// for `[CLS] [SEP]` alone, 0.9991 and up from 4 tokens). Such sequences cost little.
  static let twoPassLength = 8

  /// How the int8 path quantizes a product's input.
  enum Activations {
    /// Every row at one pass (the attention output projection: its input, the attention
    /// context, has no outlier channels; one pass costs nothing measurable at the fixtures).
    case onePass
    /// Per row, one pass or two (`engram_quantize_rows_mixed`): two for the rows of
    /// `Workspace.twoPassRows` and for rows whose crest factor exceeds `crest`, measured after
    /// the product's smoothing (`Linear.inputFactors`). `product` numbers it for `ActivationProbe`.
    case mixed(crest: Float, product: Int)
  }

  /// `output[:, columns] = input · weight[columns]ᵀ + bias[columns]` for `rows` rows, then GELU
  /// when `gelu` is set. An int8 layer reads its input as the codes `linear` quantized into
  /// `space` and writes its outputs, bias added, straight from the integer kernel.
  private static func product(
    _ dense: Linear, _ input: UnsafePointer<Float>, rows: Int, columns: Range<Int>,
    into output: UnsafeMutablePointer<Float>, space: Workspace, gelu: Bool = false
  ) {
    guard !columns.isEmpty else { return }
    let k = dense.inputWidth
    let ldc = dense.outputWidth
    let target = output + columns.lowerBound
    switch dense.weights {
    case .float32(let weights):
      let weight = weights + columns.lowerBound * k
      if rows <= smallProductRows {
        engram_gemm_nt_small(rows, columns.count, k, 1, input, k, weight, k, target, ldc)
      } else {
        cblas_sgemm(
          CblasRowMajor, CblasNoTrans, CblasTrans, Int32(rows), Int32(columns.count), Int32(k), 1,
          input, Int32(k), weight, Int32(k), 0, target, Int32(ldc))
      }
      engram_bias_gelu_rows(target, rows, columns.count, ldc, dense.bias + columns.lowerBound, gelu ? 1 : 0)
    case .int8(let packed, let scales, let sums, let group):
      let single = space.singleRows
      let order: UnsafePointer<Int32>? = space.reordered ? UnsafePointer(space.codeOrder) : nil
      let bias: UnsafePointer<Float>? = gelu ? nil : dense.bias
      let stride = space.codeStride
      if single > 0 {
        engram_qgemm_f32_grouped(
          space.codes, space.codeScales, single, stride, 1, order, packed, group, scales, sums, ldc, k,
          columns.lowerBound, columns.upperBound, bias, output, ldc)
      }
      if single < rows {
        engram_qgemm_f32_grouped(
          space.codes + 2 * single * stride, space.codeScales + single, rows - single, stride, 2,
          order.map { $0 + single }, packed, group, scales, sums, ldc, k, columns.lowerBound,
          columns.upperBound,
          bias,
          output, ldc)
      }
      if gelu { engram_bias_gelu_rows(target, rows, columns.count, ldc, dense.bias + columns.lowerBound, 1) }
    }
  }

  /// Several products of the same input, each split by output columns across `threads`. On the
  /// int8 path the input is quantized once for all of them, as `activations` says.
  private static func linear(
    _ products: [(Linear, UnsafeMutablePointer<Float>)], _ input: UnsafeMutablePointer<Float>, rows: Int,
    space: Workspace, threads: Int, activations: Activations, gelu: Bool = false
  ) {
    guard let first = products.first else { return }
    if case .int8 = first.0.weights {
      let k = first.0.inputWidth
      switch activations {
      case .onePass:
        engram_quantize_rows(input, rows, k, k, 1, space.codes, space.codeStride, space.codeScales)
        space.singleRows = rows
        space.reordered = false
      case .mixed(let crest, let product):
        for row in 0..<rows { space.crestLimits[row] = space.twoPassRows[row] ? 0 : crest }
        space.singleRows = engram_quantize_rows_mixed(
          input, rows, k, k, first.0.inputFactors, space.crestLimits, space.codes, space.codeStride,
          space.codeScales, space.codeOrder)
        space.reordered = true
        space.probe?.count(product: product, rows: rows, single: space.singleRows)
      }
    }
    let work = products.reduce(0) { $0 + rows * $1.0.inputWidth * $1.0.outputWidth }
    let parts = parts(work: work, threads: threads)
    let input = Shared(pointer: input)
    let targets = products.map { ($0.0, Shared(pointer: $0.1)) }
    parallel(parts) { part in
      for (dense, output) in targets {
        product(
          dense, input.pointer, rows: rows, columns: columns(dense.outputWidth, part: part, parts: parts),
          into: output.pointer, space: space, gelu: gelu)
      }
    }
  }

  private func encode(
    _ layer: Layer, index: Int, sequences: [[Int32]], tokens: Int, space: Workspace, threads: Int
  ) {
    let width = configuration.hiddenSize
    let epsilon = configuration.layerNormEpsilon
    let hidden = space.hidden
    space.probe?.observe(layer: index, product: 0, hidden, rows: tokens, width: width)
    Self.linear(
      [(layer.query, space.query), (layer.key, space.key), (layer.value, space.value)], hidden, rows: tokens,
      space: space, threads: threads, activations: .mixed(crest: Self.twoPassCrest, product: 0))
    attend(sequences, space: space, threads: threads)
    Self.linear(
      [(layer.attentionOutput, space.projected)], space.context, rows: tokens, space: space, threads: threads,
      activations: .onePass)
    engram_add_layer_norm(
      space.projected, hidden, hidden, tokens, width, layer.attentionNormGamma, layer.attentionNormBeta,
      epsilon)
    space.probe?.observe(layer: index, product: 1, hidden, rows: tokens, width: width)
    Self.linear(
      [(layer.intermediate, space.intermediate)], hidden, rows: tokens, space: space, threads: threads,
      activations: .mixed(crest: Self.twoPassCrest, product: 1), gelu: true)
    space.probe?.observe(
      layer: index, product: 2, space.intermediate, rows: tokens, width: configuration.intermediateSize)
    Self.linear(
      [(layer.output, space.projected)], space.intermediate, rows: tokens, space: space, threads: threads,
      activations: .mixed(crest: Self.twoPassCrestAfterGELU, product: 2))
    engram_add_layer_norm(
      space.projected, hidden, hidden, tokens, width, layer.outputNormGamma, layer.outputNormBeta, epsilon)
  }

  /// Scaled dot-product attention of every head of every sequence into `space.context`; the
  /// heads of a sequence are split across `threads`, each with its own scratch. A head runs on
  /// `engram_attention_head` (one pass per block of query rows, no operand packing: 17% less
  /// CPU than the two sgemm calls and the softmax at 70 tokens) where this CPU has a kernel
  /// for the head width, else on BLAS.
  private func attend(_ sequences: [[Int32]], space: Workspace, threads: Int) {
    let width = configuration.hiddenSize
    let heads = configuration.headCount
    let headWidth = width / heads
    let scale = 1 / Float(headWidth).squareRoot()
    let leading = Int32(width)
    let longest = sequences.map(\.count).max() ?? 0
    var start = 0
    for sequence in sequences {
      let n = sequence.count
      let length = Int32(n)
      let parts = Self.parts(work: 2 * n * n * width, threads: threads)
      let first = start
      Self.parallel(parts) { part in
        let scores = space.scores + part * longest * longest
        let scratch = space.attentionScratch + part * space.attentionStride
        for head in stride(from: part, to: heads, by: parts) {
          let offset = first * width + head * headWidth
          if engram_attention_head(
            space.query + offset, space.key + offset, space.value + offset, space.context + offset, n,
            headWidth,
            width, scale, scratch) != 0
          {
            continue
          }
          if n <= Self.smallProductRows {
            engram_gemm_nt_small(
              n, n, headWidth, scale, space.query + offset, width, space.key + offset, width, scores, n)
          } else {
            cblas_sgemm(
              CblasRowMajor, CblasNoTrans, CblasTrans, length, length, Int32(headWidth), scale,
              space.query + offset, leading, space.key + offset, leading, 0, scores, length)
          }
          engram_softmax_rows(scores, n, n)
          cblas_sgemm(
            CblasRowMajor, CblasNoTrans, CblasNoTrans, length, Int32(headWidth), length, 1,
            scores, length, space.value + offset, leading, 0, space.context + offset, leading)
        }
      }
      start += n
    }
  }

  /// Pools each sequence's rows into one vector and, when `normalizes`, scales it to unit length.
  private func pool(_ sequences: [[Int32]], _ hidden: UnsafePointer<Float>, normalizes: Bool) -> [[Float]] {
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
        guard normalizes else { return }
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
