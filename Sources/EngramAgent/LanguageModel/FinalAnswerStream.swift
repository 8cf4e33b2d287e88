/// Follows a planner reply as it streams in and decodes the text of a `{"final": "…"}` answer
/// as soon as it arrives, so the user can watch the answer being written.
///
/// The reply's first object (after a ```` ```json ```` fence or a preamble, as the parser
/// reads it) must start with the key `"final"` and the opening quote of a string; any other
/// start (a skill or a plan) gives no text at all. Inside the string, JSON escapes are decoded (`\n`, `\"`, `\uXXXX` with
/// surrogate pairs); the text ends at the closing quote. A malformed escape stops the text
/// there (the parser rejects the reply afterwards and the planner withdraws it).
struct FinalAnswerStream {
  private enum Phase {
    case opening
    case text
    case escape
    case unicode(digits: String)
    case done
  }

  private var phase = Phase.opening
  private var opening: [Unicode.Scalar] = []
  private var highSurrogate: UInt32?

  /// Feeds the next piece of the reply; returns the answer text it completes (may be empty).
  mutating func feed(_ delta: String) -> String {
    var output = String.UnicodeScalarView()
    for scalar in delta.unicodeScalars {
      switch phase {
      case .done:
        return String(output)
      case .opening:
        opening.append(scalar)
        switch Self.matchOpening(opening) {
        case .matched: phase = .text
        case .needMore: break
        case .failed: phase = .done
        }
      case .text:
        if scalar == "\"" {
          phase = .done
        } else if scalar == "\\" {
          phase = .escape
        } else {
          output.append(scalar)
        }
      case .escape:
        phase = .text
        switch scalar {
        case "\"", "\\", "/": output.append(scalar)
        case "n": output.append("\n")
        case "t": output.append("\t")
        case "r": output.append("\r")
        case "b": output.append("\u{08}")
        case "f": output.append("\u{0C}")
        case "u": phase = .unicode(digits: "")
        default: phase = .done
        }
      case .unicode(let digits):
        let next = digits + String(scalar)
        guard scalar.properties.isASCIIHexDigit else {
          phase = .done
          continue
        }
        guard next.count == 4 else {
          phase = .unicode(digits: next)
          continue
        }
        phase = .text
        let value = UInt32(next, radix: 16)!
        if (0xD800...0xDBFF).contains(value) {
          highSurrogate = value
        } else if (0xDC00...0xDFFF).contains(value), let high = highSurrogate {
          highSurrogate = nil
          let combined = 0x10000 + ((high - 0xD800) << 10) + (value - 0xDC00)
          if let character = Unicode.Scalar(combined) { output.append(character) }
        } else if let character = Unicode.Scalar(value) {
          highSurrogate = nil
          output.append(character)
        } else {
          phase = .done
        }
      }
    }
    return String(output)
  }

  private enum Match {
    case matched
    case needMore
    case failed
  }

  /// Whether `scalars` is `<anything without {>{<blanks>"final"<blanks>:<blanks>"` (the
  /// parser reads the first object of a reply, after a fence or a preamble), a beginning of
  /// it, or neither.
  private static func matchOpening(_ scalars: [Unicode.Scalar]) -> Match {
    guard var index = scalars.firstIndex(of: "{") else { return .needMore }
    index += 1
    for part in ["\"final\"", ":", "\""] {
      while index < scalars.count, scalars[index].properties.isWhitespace { index += 1 }
      for expected in part.unicodeScalars {
        guard index < scalars.count else { return .needMore }
        guard scalars[index] == expected else { return .failed }
        index += 1
      }
    }
    return .matched
  }
}
