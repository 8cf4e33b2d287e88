enum LocomoSuite {
  static func run(_ arguments: inout BenchArguments) async throws -> (BenchReport, String) {
    try arguments.finish()
    throw BenchError("suite not built yet")
  }
}
