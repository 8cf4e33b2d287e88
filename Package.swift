// swift-tools-version: 6.0
import PackageDescription

/// Engram: a local-first memory and vector store engine for long-term assistant agents.
///
/// Layers (arrows are the only allowed imports; `make build` checks every import is declared
/// with `--explicit-target-dependency-import-check error`; see README "Architecture"):
/// engram (CLI), EngramMCP (tools) -> EngramHTTP / EngramAgent -> Engram -> EngramStore / EngramVectors /
/// EngramEmbeddings -> EngramCore, and the system libraries CSQLite / CBLAS / CEngramKernels;
/// EngramPostgres (the optional PostgreSQL store) alone links CPostgres (libpq).
/// BLAS: OpenBLAS (CBLAS) where there is no Accelerate; on Apple platforms the code imports
/// Accelerate instead (`#if canImport(Accelerate)`), so CBLAS is no dependency there.
let openBLAS: Target.Dependency = .target(
  name: "CBLAS", condition: .when(platforms: [.linux, .android, .windows, .openbsd, .wasi]))

/// Apple platforms: Swift 6 concurrency and Synchronization's `Mutex` and `Atomic` need
/// macOS 15 and iOS 18; Accelerate's CBLAS is on both.
let package = Package(
  name: "Engram",
  platforms: [.macOS(.v15), .iOS(.v18)],
  products: [
    .library(name: "EngramCore", targets: ["EngramCore"]),
    .library(name: "Engram", targets: ["Engram"]),
    .library(name: "EngramAgent", targets: ["EngramAgent"]),
    .library(name: "EngramStore", targets: ["EngramStore"]),
    .library(name: "EngramVectors", targets: ["EngramVectors"]),
    .library(name: "EngramEmbeddings", targets: ["EngramEmbeddings"]),
    // The PostgreSQL store (libpq): only an application that opens postgresql:// links it.
    .library(name: "EngramPostgres", targets: ["EngramPostgres"]),
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
    .target(name: "CEngramKernels"),

    // Libraries.
    // The shared vocabulary (kinds, timestamps and the date rule, JSON values, the tokenizer and lexicon).
    .target(name: "EngramCore"),
    .target(name: "EngramStore", dependencies: ["EngramCore", "CSQLite"]),
    // The PostgreSQL store, registered with EngramStore's StoreBackends by the applications
    // that link it; nothing else depends on libpq.
    .target(name: "EngramPostgres", dependencies: ["EngramCore", "EngramStore", "CPostgres"]),
    .target(name: "EngramVectors", dependencies: ["EngramCore", openBLAS, "CEngramKernels"]),
    .target(name: "EngramEmbeddings", dependencies: ["EngramCore", openBLAS, "CEngramKernels"]),
    .target(
      name: "Engram", dependencies: ["EngramCore", "EngramStore", "EngramVectors", "EngramEmbeddings"]),
    .target(
      name: "EngramAgent", dependencies: ["Engram", "EngramCore"],
      exclude: [
        "Intent/intent-corpus.jsonl", "Intent/skill-words.json", "Places/places.tsv",
        "BuiltIn/arithmetic-words.json", "Time/date-words.json",
      ]),

    // Executables.
    // The HTTP/1.1, SSE and JSON-RPC core (MCP's transports, the web app's server, access).
    .target(name: "EngramHTTP", dependencies: ["EngramCore"]),
    // The MCP tools over the engine: Codable arguments whose input schemas derive from them.
    .target(name: "EngramMCP", dependencies: ["Engram", "EngramAgent", "EngramCore", "EngramHTTP"]),
    // The web app's files (Web/assets) ship inside the binary as generated Swift (`make web`).
    .target(
      name: "EngramCLI",
      dependencies: ["EngramAgent", "Engram", "EngramCore", "EngramHTTP", "EngramMCP", "EngramPostgres"],
      exclude: ["Web/assets"]),
    .executableTarget(name: "engram", dependencies: ["EngramCLI"]),
    .executableTarget(
      name: "engram-bench",
      dependencies: [
        "Engram", "EngramStore", "EngramVectors", "EngramEmbeddings", "EngramAgent", "CEngramKernels",
        "EngramPostgres",
      ],
      path: "Benchmarks/engram-bench"
    ),
    .executableTarget(
      name: "engram-crashtest", dependencies: ["Engram", "EngramEmbeddings"], path: "Tests/CrashTest"),

    // Test helpers shared by every test target: loopback listeners, an HTTP server, child
    // processes awaited off the cooperative pool, and the watchdog every suite carries.
    .target(
      name: "EngramTestSupport", dependencies: ["EngramCore", "EngramStore"], path: "Tests/EngramTestSupport"),
    // The throwaway PostgreSQL databases of the tests that need one.
    .target(
      name: "EngramPostgresTestSupport", dependencies: ["EngramPostgres", "EngramTestSupport"],
      path: "Tests/EngramPostgresTestSupport"),

    // Tests mirror sources.
    .testTarget(name: "EngramCoreTests", dependencies: ["EngramCore", "EngramTestSupport"]),
    .testTarget(name: "EngramStoreTests", dependencies: ["EngramCore", "EngramStore", "EngramTestSupport"]),
    .testTarget(
      name: "EngramVectorsTests", dependencies: ["EngramCore", "EngramVectors", "EngramTestSupport"]),
    .testTarget(
      name: "EngramEmbeddingsTests",
      dependencies: ["EngramEmbeddings", "EngramTestSupport"],
      resources: [.copy("Fixtures")]
    ),
    // EngramTests still holds the engine's PostgreSQL suites (PostgresEngineTests, ...), which
    // share its helpers: it links EngramPostgres until they move to EngramPostgresTests.
    .testTarget(
      name: "EngramTests",
      dependencies: [
        "Engram", "EngramCore", "EngramStore", "EngramTestSupport", "EngramPostgres",
        "EngramPostgresTestSupport",
      ],
      resources: [.copy("Fixtures")]),
    .testTarget(
      name: "EngramAgentTests",
      dependencies: ["Engram", "EngramAgent", "EngramCore", "EngramStore", "EngramTestSupport"],
      resources: [.copy("Fixtures")]
    ),
    .testTarget(name: "EngramHTTPTests", dependencies: ["EngramCore", "EngramHTTP", "EngramTestSupport"]),
    .testTarget(
      name: "EngramMCPTests",
      dependencies: ["Engram", "EngramAgent", "EngramCore", "EngramHTTP", "EngramMCP", "EngramTestSupport"]),
    .testTarget(
      name: "EngramPostgresTests",
      dependencies: [
        "Engram", "EngramCore", "EngramStore", "EngramPostgres", "EngramPostgresTestSupport",
        "EngramTestSupport",
      ]),
    // Unit tests of the CLI's parts; the end-to-end tests run the built `engram` binary.
    .testTarget(
      name: "EngramCLITests",
      dependencies: [
        "Engram", "EngramAgent", "EngramCLI", "EngramMCP", "EngramStore", "EngramTestSupport",
        "EngramPostgresTestSupport",
      ]),
    .testTarget(
      name: "EngramCLIEndToEndTests",
      dependencies: [
        "Engram", "EngramAgent", "EngramCLI", "EngramStore", "EngramTestSupport", "EngramPostgresTestSupport",
      ]),
  ],
  swiftLanguageModes: [.v6]
)
