import CEngramKernels
import Foundation

/// The SIMD level the kernels run at, and `ENGRAM_CPU_LEVEL` checked: a benchmark asked to run
/// at a level must run at exactly that level, not quietly at another.
enum CPULevel {
  /// The dispatch level's name (`scalar`, `avx2`, `avx512`, `neon`).
  /// - Throws: `BenchError` when `ENGRAM_CPU_LEVEL` is not a level of this architecture, or
  ///   names one this CPU lacks.
  static func checked() throws -> String {
    let level = engram_cpu_level()
    let name = String(cString: engram_cpu_level_name(level))
    guard let wanted = ProcessInfo.processInfo.environment["ENGRAM_CPU_LEVEL"], !wanted.isEmpty else {
      return name
    }
    let named = engram_cpu_level_named(wanted)
    guard named >= 0 else {
      #if arch(arm64)
        let choices = "scalar or neon"
      #else
        let choices = "scalar, avx2 or avx512"
      #endif
      throw BenchError("ENGRAM_CPU_LEVEL=\(wanted) is not a level here (\(choices))")
    }
    guard named == level else {
      throw BenchError("ENGRAM_CPU_LEVEL=\(wanted), but this CPU runs at most \(name)")
    }
    return name
  }
}
