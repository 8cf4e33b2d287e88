extension JSONValue {
  /// A byte-level parser for the common shape of stored JSON (objects, arrays, strings,
  /// booleans, null, integers), about twenty times cheaper than `JSONDecoder` with the
  /// try-each-type `Decodable` conformance, which throws and discards an error per
  /// attempted type for every value. Search parses the metadata of every hit it returns.
  ///
  /// It accepts only what it can decode exactly as `JSONDecoder` would and returns nil for
  /// anything else: numbers with a fraction or exponent, integers beyond `Int`, `-0`,
  /// duplicate keys, lone surrogates, invalid UTF-8, deep nesting and every kind of
  /// malformed text. `parse(_:)` then falls back to `JSONDecoder`, so results and errors
  /// are the same as before, only faster.
  struct FastParser {
    private let bytes: UnsafeBufferPointer<UInt8>
    private var position = 0
    private var depth = 0
    private static let maxDepth = 64

    /// The value of `bytes`, or nil when the fast path declines it.
    static func parse(_ bytes: UnsafeBufferPointer<UInt8>) -> JSONValue? {
      var parser = FastParser(bytes: bytes)
      guard let value = parser.value() else { return nil }
      parser.skipWhitespace()
      // Not a ternary with `nil`: JSONValue is ExpressibleByNilLiteral, so it would mean `.null`.
      guard parser.position == bytes.count else { return nil }
      return value
    }

    private init(bytes: UnsafeBufferPointer<UInt8>) {
      self.bytes = bytes
    }

    private mutating func skipWhitespace() {
      while position < bytes.count {
        switch bytes[position] {
        case 0x20, 0x09, 0x0A, 0x0D: position += 1
        default: return
        }
      }
    }

    private mutating func value() -> JSONValue? {
      skipWhitespace()
      guard position < bytes.count else { return nil }
      switch bytes[position] {
      case UInt8(ascii: "{"): return object()
      case UInt8(ascii: "["): return array()
      case UInt8(ascii: "\""): return string().map(JSONValue.string)
      case UInt8(ascii: "t"): return literal("true", .bool(true))
      case UInt8(ascii: "f"): return literal("false", .bool(false))
      case UInt8(ascii: "n"): return literal("null", .null)
      default: return integer()
      }
    }

    private mutating func literal(_ word: StaticString, _ value: JSONValue) -> JSONValue? {
      let count = word.utf8CodeUnitCount
      guard bytes.count - position >= count else { return nil }
      for offset in 0..<count where bytes[position + offset] != word.utf8Start[offset] { return nil }
      position += count
      return value
    }

    /// A plain integer (`-?(0|[1-9][0-9]*)`) that fits in `Int`; nil for anything else.
    private mutating func integer() -> JSONValue? {
      var negative = false
      if bytes[position] == UInt8(ascii: "-") {
        negative = true
        position += 1
      }
      let digitsStart = position
      var magnitude: UInt64 = 0
      while position < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[position]) {
        let (times10, overflow1) = magnitude.multipliedReportingOverflow(by: 10)
        let (sum, overflow2) = times10.addingReportingOverflow(UInt64(bytes[position] - UInt8(ascii: "0")))
        guard !overflow1 && !overflow2 else { return nil }
        magnitude = sum
        position += 1
      }
      let digitCount = position - digitsStart
      guard digitCount > 0 else { return nil }
      // A leading zero, `-0`, a fraction or an exponent: leave it to JSONDecoder.
      if digitCount > 1 && bytes[digitsStart] == UInt8(ascii: "0") { return nil }
      if negative && magnitude == 0 { return nil }
      if position < bytes.count {
        switch bytes[position] {
        case UInt8(ascii: "."), UInt8(ascii: "e"), UInt8(ascii: "E"): return nil
        default: break
        }
      }
      if negative {
        guard magnitude <= UInt64(Int.max) + 1 else { return nil }
        return .int(magnitude == UInt64(Int.max) + 1 ? Int.min : -Int(magnitude))
      }
      guard magnitude <= UInt64(Int.max) else { return nil }
      return .int(Int(magnitude))
    }

    private mutating func string() -> String? {
      position += 1  // the opening quote
      let start = position
      // The common case: no escapes, so the bytes are the string.
      while position < bytes.count {
        let byte = bytes[position]
        if byte == UInt8(ascii: "\"") {
          let text = String(validating: UnsafeBufferPointer(rebasing: bytes[start..<position]), as: UTF8.self)
          position += 1
          return text
        }
        if byte == UInt8(ascii: "\\") { break }
        if byte < 0x20 { return nil }
        position += 1
      }
      var buffer = Array(bytes[start..<position])
      while position < bytes.count {
        let byte = bytes[position]
        position += 1
        switch byte {
        case UInt8(ascii: "\""):
          return String(validating: buffer, as: UTF8.self)
        case UInt8(ascii: "\\"):
          guard position < bytes.count else { return nil }
          let escape = bytes[position]
          position += 1
          switch escape {
          case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): buffer.append(escape)
          case UInt8(ascii: "b"): buffer.append(0x08)
          case UInt8(ascii: "f"): buffer.append(0x0C)
          case UInt8(ascii: "n"): buffer.append(0x0A)
          case UInt8(ascii: "r"): buffer.append(0x0D)
          case UInt8(ascii: "t"): buffer.append(0x09)
          case UInt8(ascii: "u"):
            guard let scalar = unicodeEscape() else { return nil }
            buffer.append(contentsOf: UTF8.encode(scalar)!)
          default: return nil
          }
        default:
          if byte < 0x20 { return nil }
          buffer.append(byte)
        }
      }
      return nil
    }

    /// The scalar of `XXXX` (after `\u`), joining a surrogate pair; nil for a lone surrogate.
    private mutating func unicodeEscape() -> Unicode.Scalar? {
      guard let high = hex4() else { return nil }
      switch high {
      case 0xD800...0xDBFF:
        guard bytes.count - position >= 6, bytes[position] == UInt8(ascii: "\\"),
          bytes[position + 1] == UInt8(ascii: "u")
        else { return nil }
        position += 2
        guard let low = hex4(), (0xDC00...0xDFFF).contains(low) else { return nil }
        return Unicode.Scalar(0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00))
      case 0xDC00...0xDFFF: return nil
      default: return Unicode.Scalar(high)
      }
    }

    private mutating func hex4() -> UInt32? {
      guard bytes.count - position >= 4 else { return nil }
      var value: UInt32 = 0
      for _ in 0..<4 {
        let byte = bytes[position]
        let digit: UInt8
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
        default: return nil
        }
        value = value << 4 | UInt32(digit)
        position += 1
      }
      return value
    }

    private mutating func array() -> JSONValue? {
      depth += 1
      defer { depth -= 1 }
      guard let empty = open(closing: "]") else { return nil }
      var elements: [JSONValue] = []
      if empty { return .array(elements) }
      while true {
        guard let element = value() else { return nil }
        elements.append(element)
        guard let closed = separator(closing: "]") else { return nil }
        if closed { return .array(elements) }
      }
    }

    private mutating func object() -> JSONValue? {
      depth += 1
      defer { depth -= 1 }
      guard let empty = open(closing: "}") else { return nil }
      var members: [String: JSONValue] = [:]
      if empty { return .object(members) }
      while true {
        skipWhitespace()
        guard position < bytes.count, bytes[position] == UInt8(ascii: "\""), let key = string() else {
          return nil
        }
        skipWhitespace()
        guard position < bytes.count, bytes[position] == UInt8(ascii: ":") else { return nil }
        position += 1
        guard let member = value() else { return nil }
        // How JSONDecoder treats a repeated key is its business: decline.
        guard members.updateValue(member, forKey: key) == nil else { return nil }
        guard let closed = separator(closing: "}") else { return nil }
        if closed { return .object(members) }
      }
    }

    /// Steps over a container's opening bracket (the caller has counted the depth): true
    /// when `closing` follows at once (an empty container), nil when nested too deep.
    private mutating func open(closing: Unicode.Scalar) -> Bool? {
      guard depth <= Self.maxDepth else { return nil }
      position += 1
      skipWhitespace()
      guard position < bytes.count && bytes[position] == UInt8(ascii: closing) else { return false }
      position += 1
      return true
    }

    /// Reads what follows a container's element: true at `closing`, false at a comma, nil
    /// for anything else.
    private mutating func separator(closing: Unicode.Scalar) -> Bool? {
      skipWhitespace()
      guard position < bytes.count else { return nil }
      let byte = bytes[position]
      position += 1
      if byte == UInt8(ascii: closing) { return true }
      return byte == UInt8(ascii: ",") ? false : nil
    }
  }
}
