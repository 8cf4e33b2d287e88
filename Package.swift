// swift-tools-version: 6.0
import PackageDescription

/// Engram: a local-first memory and vector store engine for long-term assistant agents.
///
/// Layers (arrows are the only allowed imports; see ARCHITECTURE in the team docs):
/// engram (CLI) -> EngramAgent -> Engram -> EngramStore / EngramVectors / EngramEmbeddings
/// -> CSQLite / CPostgres / CBLAS / CEngramKernels.
let package = Package(
  name: "Engram",
  platforms: [.macOS(.v15)],
  products: [
    .library(name: "Engram", targets: ["Engram"]),
    .library(name: "EngramAgent", targets: ["EngramAgent"]),
    .library(name: "EngramStore", targets: ["EngramStore"]),
    .library(name: "EngramVectors", targets: ["EngramVectors"]),
    .library(name: "EngramEmbeddings", targets: ["EngramEmbeddings"]),
    .executable(name: "engram", targets: ["engram"]),
    .executable(name: "engram-bench", targets: ["engram-bench"]),
  ],
  targets: [
    // System libraries: one shim per C library.
    .systemLibrary(
      name: "CSQLite",
      pkgConfig: "sqlite3",
      providers: [.apt(["libsqlite3-dev"]), .brew(["sqlite"])]
    ),
    .systemLibrary(
      name: "CPostgres",
      pkgConfig: "libpq",
      providers: [.apt(["libpq-dev"]), .brew(["libpq"])]
    ),
    .systemLibrary(
      name: "CBLAS",
      pkgConfig: "openblas",
      providers: [.apt(["libopenblas-dev"]), .brew(["openblas"])]
    ),
    // SIMD kernels (int8 / float32 dot products) with runtime CPU dispatch.
    .target(
      name: "CEngramKernels",
      cSettings: [.unsafeFlags(["-O3"])]
    ),

    // Libraries.
    .target(name: "EngramStore", dependencies: ["CSQLite", "CPostgres"]),
    .target(name: "EngramVectors", dependencies: ["CBLAS", "CEngramKernels"]),
    // The forward pass's element-wise loops (GELU, softmax, LayerNorm) are some 50x slower
    // unoptimized, which made the parity tests the slowest part of `make test`.
    .target(
      name: "EngramEmbeddings", dependencies: ["CBLAS", "CEngramKernels"],
      swiftSettings: [.unsafeFlags(["-O"], .when(configuration: .debug))]),
    .target(name: "Engram", dependencies: ["EngramStore", "EngramVectors", "EngramEmbeddings"]),
    .target(name: "EngramAgent", dependencies: ["Engram"], exclude: ["Intent/intent-corpus.jsonl"]),

    // Executables.
    .target(name: "EngramMCP", dependencies: ["Engram"]),
    .target(name: "EngramCLI", dependencies: ["EngramAgent", "Engram", "EngramMCP"]),
    .executableTarget(name: "engram", dependencies: ["EngramCLI"]),
    .executableTarget(
      name: "engram-bench",
      dependencies: [
        "Engram", "EngramStore", "EngramVectors", "EngramEmbeddings", "EngramAgent", "CEngramKernels",
      ],
      path: "Benchmarks/engram-bench"
    ),
    .executableTarget(
      name: "engram-crashtest", dependencies: ["Engram", "EngramEmbeddings"], path: "Tests/CrashTest"),

    // Test helpers shared by several test targets (loopback listeners and an HTTP server).
    .target(name: "EngramTestSupport", path: "Tests/EngramTestSupport"),

    // Tests mirror sources.
    .testTarget(name: "EngramStoreTests", dependencies: ["EngramStore"]),
    .testTarget(name: "EngramVectorsTests", dependencies: ["EngramVectors"]),
    .testTarget(
      name: "EngramEmbeddingsTests",
      dependencies: ["EngramEmbeddings", "EngramTestSupport"],
      resources: [.copy("Fixtures")]
    ),
    .testTarget(name: "EngramTests", dependencies: ["Engram"]),
    .testTarget(
      name: "EngramAgentTests",
      dependencies: ["EngramAgent", "EngramTestSupport"],
      resources: [.copy("Fixtures")]
    ),
    .testTarget(name: "EngramMCPTests", dependencies: ["EngramMCP"]),
    .testTarget(name: "EngramCLITests", dependencies: ["EngramCLI", "EngramStore", "EngramTestSupport"]),
  ],
  swiftLanguageModes: [.v6]
)
