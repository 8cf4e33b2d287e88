// libFuzzer entry: the CLI argument parser returns parsed values, help, or a typed
// UsageError for any argument list (the input split at NUL bytes). Built by scripts/fuzz.sh.
import EngramCLI
import Foundation

let argumentParser = ArgumentParser(
  configuration: CommandConfiguration(
    commandName: "query", abstract: "Search memories.",
    options: [
      .database,
      OptionSpec("limit", short: "k", kind: .integer, valueName: "N", help: "Results."),
      OptionSpec("weight", kind: .double, help: "Weight."),
      OptionSpec("tag", short: "t", repeating: true, help: "Tags."),
      OptionSpec("mode", kind: .choice(["hybrid", "vector", "keyword"]), help: "Mode."),
      OptionSpec("older-than", kind: .duration, help: "Age."),
      OptionSpec("since", kind: .date, help: "Start."),
      .json,
      .flag("verbose", short: "v", help: "More."),
    ],
    positionals: [
      PositionalSpec("text", help: "The query."), PositionalSpec("extra", optional: true, help: ""),
    ]),
  toolName: "engram")

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzArgumentParser(_ start: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
  let bytes = UnsafeBufferPointer(start: start, count: count)
  let arguments = bytes.split(separator: 0, omittingEmptySubsequences: false).map {
    String(decoding: $0, as: UTF8.self)
  }
  _ = try? argumentParser.parse(arguments)
  return 0
}
