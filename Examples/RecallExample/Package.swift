// swift-tools-version: 6.0
import PackageDescription

/// A small application that uses Engram the way every app would: as a versioned
/// dependency, `.package(url: URL, from: "0.1.0")`. `scripts/example-test.sh` (run by
/// `make test`) tags a clone of this repository and sets `ENGRAM_URL` to it, proving SwiftPM
/// accepts Engram by version. Without `ENGRAM_URL` (`swift run` in this folder of a
/// checkout) the checkout itself is the dependency.
let engram: Package.Dependency =
  if let url = Context.environment["ENGRAM_URL"] {
    .package(url: url, from: "0.1.0")
  } else {
    .package(name: "engram", path: "../..")
  }

let package = Package(
  name: "RecallExample",
  platforms: [.macOS(.v15)],
  dependencies: [engram],
  targets: [
    .executableTarget(
      name: "RecallExample",
      dependencies: [.product(name: "Engram", package: "engram")]
    )
  ],
  swiftLanguageModes: [.v6]
)
