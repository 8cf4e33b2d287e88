// swift-tools-version: 6.0
import PackageDescription

/// A small application that uses Engram the way every app would: as a versioned
/// dependency. `scripts/example-test.sh` (run by `make test`) tags a clone of this
/// repository and points `ENGRAM_URL` at it, proving SwiftPM accepts Engram by version.
let engramURL = Context.environment["ENGRAM_URL"] ?? "https://github.com/engram-memory/engram.git"

let package = Package(
  name: "RecallExample",
  platforms: [.macOS(.v15)],
  dependencies: [
    .package(url: engramURL, from: "0.1.0")
  ],
  targets: [
    .executableTarget(
      name: "RecallExample",
      dependencies: [.product(name: "Engram", package: "engram")]
    )
  ],
  swiftLanguageModes: [.v6]
)
