import CEngramKernels
import EngramTestSupport
import Foundation
import Testing

@testable import EngramEmbeddings

/// multilingual-e5-small's layers are built on the embedder's threads at load
/// (`BertModel.init(packed:configuration:precision:smoothing:group:threads:)`): the model is
/// the same, byte for byte, as one built on one thread.
@Suite(.timeLimit(.minutes(5)), .watchdog) struct ModelLoadThreadsTests {
  /// Every byte of a layer's weights: the int8 codes, scales and code sums (and the smoothing's
  /// input factors), or the dequantized float32 weights; then the bias.
  static func bytes(_ linear: BertModel.Linear) -> [UInt8] {
    var bytes: [UInt8] = []
    func append<T>(_ pointer: UnsafePointer<T>, _ count: Int) {
      bytes += UnsafeRawBufferPointer(start: UnsafeRawPointer(pointer), count: count * MemoryLayout<T>.stride)
    }
    switch linear.weights {
    case .float32(let weights):
      append(weights, linear.outputWidth * linear.inputWidth)
    case .int8(let packed, let scales, let sums, let group):
      let groups =
        engram_qgemm_padded_outputs(linear.outputWidth)
        * engram_qgemm_groups_grouped(linear.inputWidth, group)
      append(packed, engram_qgemm_packed_bytes_grouped(linear.outputWidth, linear.inputWidth, group))
      append(scales, groups)
      append(sums, groups)
    }
    if let factors = linear.inputFactors { append(factors, linear.inputWidth) }
    append(linear.bias, linear.outputWidth)
    return bytes
  }

  static func bytes(_ model: BertModel) -> [[UInt8]] {
    model.layers.flatMap { layer in
      [layer.query, layer.key, layer.value, layer.attentionOutput, layer.intermediate, layer.output].map(
        bytes)
    }
  }

  @Test(
    "layers built on two threads are the layers one thread builds, byte for byte",
    arguments: [EmbeddingPrecision.float32, .int8])
  func twoThreadsBuildTheSameModel(precision: EmbeddingPrecision) throws {
    let installed = try InstalledE5.embedder(precision: .int8)
    let packed = try E5ModelFile(path: installed.file.path)
    // At int8, the calibration's model built each way gives the same maxima, and the model is
    // packed smoothed with them, as a load builds it.
    var maxima: [[[Float]]]?
    if precision == .int8 {
      let tokenizer = installed.tokenizer
      let calibration = BertModel.calibrationTexts.map {
        [tokenizer.vocabulary.bos] + tokenizer.pieceIDs(E5Embedder.Role.passage.prefix + $0)
          + [tokenizer.vocabulary.eos]
      }
      let found = [1, 2].map { threads in
        BertModel(packed: packed, configuration: installed.configuration, precision: .int8, threads: threads)
          .channelMaxima(calibration)
      }
      #expect(found[0] == found[1])
      maxima = found[0]
    }
    let one = BertModel(
      packed: packed, configuration: installed.configuration, precision: precision, smoothing: maxima,
      threads: 1)
    let two = BertModel(
      packed: packed, configuration: installed.configuration, precision: precision, smoothing: maxima,
      threads: 2)
    #expect(one.layers.count == installed.configuration.layerCount)
    let expected = Self.bytes(one)
    let found = Self.bytes(two)
    #expect(found.count == expected.count)
    #expect(
      found.indices.filter { found[$0] != expected[$0] } == [], "weights that differ (layer · 6 + product)")
    let sequences = [[0, 5, 17, 1_000, 2], [0, 33, 2]].map { $0.map(Int32.init) }
    #expect(one.sentenceVectors(sequences) == two.sentenceVectors(sequences))
  }
}
