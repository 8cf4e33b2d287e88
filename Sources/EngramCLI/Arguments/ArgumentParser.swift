import Engram
import Foundation

/// Turns one command's arguments into typed values according to its ``CommandConfiguration``.
///
/// Accepts `--opt value`, `--opt=value`, `-k 5`, `-k5`, bundled short flags (`-vq`), repeated
/// options, `--` (everything after it is positional) and `-` as a positional (stdin by convention).
public struct ArgumentParser: Sendable {
  /// The outcome of parsing: values to run with, or a request for the command's help.
  public enum Outcome: Sendable, Hashable {
    /// Run the command with these values.
    case run(ParsedArguments)
    /// `--help` or `-h` was given.
    case help
  }

  /// The command being parsed for.
  public let configuration: CommandConfiguration
  /// The full usage line, used in errors.
  let usage: String

  /// Creates a parser for a command; `toolName` prefixes the usage line in errors.
  public init(configuration: CommandConfiguration, toolName: String) {
    self.configuration = configuration
    self.usage = HelpFormatter.usageLine(for: configuration, toolName: toolName)
  }

  /// Parses `arguments` (without the tool and command names).
  /// - Throws: ``UsageError`` naming the first problem, with the command's usage line.
  public func parse(_ arguments: [String]) throws(UsageError) -> Outcome {
    // Help wins over any other problem on the line, as long as it comes before `--`.
    let options = arguments.prefix { $0 != "--" }
    if options.contains("--help") || options.contains("-h") { return .help }
    do {
      return try parseWithoutUsage(arguments)
    } catch {
      throw UsageError(error.reason, usage: usage)
    }
  }

  private func parseWithoutUsage(_ arguments: [String]) throws(UsageError) -> Outcome {
    var parsed = ParsedArguments()
    var positionals: [String] = []
    var index = 0
    var onlyPositionals = false
    while index < arguments.count {
      let token = arguments[index]
      index += 1
      if onlyPositionals || token == "-" || !token.hasPrefix("-") || looksNumeric(token) {
        positionals.append(token)
      } else if token == "--" {
        onlyPositionals = true
      } else if token.hasPrefix("--") {
        let body = token.dropFirst(2)
        let name: String
        var inlineValue: String?
        if let equals = body.firstIndex(of: "=") {
          name = String(body[..<equals])
          inlineValue = String(body[body.index(after: equals)...])
        } else {
          name = String(body)
        }
        guard let option = configuration.options.first(where: { $0.name == name }) else {
          throw UsageError(.unknownOption("--" + name))
        }
        if option.isFlag {
          if inlineValue != nil { throw UsageError(.unexpectedValue(option: "--" + name)) }
          parsed.append(.flag, for: option.name)
          continue
        }
        let raw: String
        if let inlineValue {
          raw = inlineValue
        } else {
          guard index < arguments.count, isValue(arguments[index]) else {
            throw UsageError(.missingValue(option: "--" + name))
          }
          raw = arguments[index]
          index += 1
        }
        try store(raw, for: option, spelled: "--" + name, in: &parsed)
      } else {
        // One or more short options: `-v`, `-vq`, `-k5`, `-k 5`.
        var letters = Substring(token.dropFirst())
        while let letter = letters.first {
          letters = letters.dropFirst()
          guard let option = configuration.options.first(where: { $0.shortName == letter }) else {
            throw UsageError(.unknownOption("-" + String(letter)))
          }
          if option.isFlag {
            parsed.append(.flag, for: option.name)
            continue
          }
          let raw: String
          if !letters.isEmpty {
            raw = String(letters.hasPrefix("=") ? letters.dropFirst() : letters)
            letters = ""
          } else {
            guard index < arguments.count, isValue(arguments[index]) else {
              throw UsageError(.missingValue(option: "-" + String(letter)))
            }
            raw = arguments[index]
            index += 1
          }
          try store(raw, for: option, spelled: "-" + String(letter), in: &parsed)
        }
      }
    }
    try assign(positionals, into: &parsed)
    return .run(parsed)
  }

  /// Whether a token following a valued option can be its value (not another option).
  private func isValue(_ token: String) -> Bool {
    token == "-" || !token.hasPrefix("-") || looksNumeric(token)
  }

  /// `-5`, `-0.5`: negative numbers are values, not short options.
  private func looksNumeric(_ token: String) -> Bool {
    token.count > 1 && token.hasPrefix("-") && Double(token) != nil
  }

  private func store(
    _ raw: String, for option: OptionSpec, spelled: String, in parsed: inout ParsedArguments
  ) throws(UsageError) {
    let value = try convert(raw, kind: option.kind ?? .string, argument: spelled)
    if option.isRepeating {
      parsed.append(value, for: option.name)
    } else {
      parsed.replace(value, for: option.name)
    }
  }

  private func assign(_ positionals: [String], into parsed: inout ParsedArguments) throws(UsageError) {
    var remaining = positionals[...]
    for spec in configuration.positionals {
      if spec.isRepeating {
        if remaining.isEmpty && !spec.isOptional { throw UsageError(.missingArgument(spec.synopsis)) }
        for raw in remaining {
          parsed.append(try convert(raw, kind: spec.kind, argument: spec.synopsis), for: spec.name)
        }
        remaining = []
      } else if let raw = remaining.first {
        remaining = remaining.dropFirst()
        parsed.append(try convert(raw, kind: spec.kind, argument: spec.synopsis), for: spec.name)
      } else if !spec.isOptional {
        throw UsageError(.missingArgument(spec.synopsis))
      }
    }
    if let extra = remaining.first { throw UsageError(.unexpectedArgument(extra)) }
  }

  private func convert(_ raw: String, kind: ValueKind, argument: String) throws(UsageError) -> ArgumentValue {
    let invalid = UsageError(.invalidValue(argument: argument, value: raw, expected: kind.expectation))
    switch kind {
    case .string:
      return .string(raw)
    case .integer:
      guard let number = Int(raw) else { throw invalid }
      return .integer(number)
    case .double:
      guard let number = Double(raw), number.isFinite else { throw invalid }
      return .double(number)
    case .duration:
      guard let seconds = DurationParser.parse(raw) else { throw invalid }
      return .duration(seconds)
    case .date:
      guard let date = DateParser.parse(raw) else { throw invalid }
      return .date(date)
    case .choice(let words):
      guard words.contains(raw) else { throw invalid }
      return .string(raw)
    }
  }
}
