import Foundation

/// A quantity said in one unit and asked in another ("turn 30 celsius into fahrenheit",
/// "how many km is 3.5 miles", 5公斤是多少磅): temperature, length, mass and volume.
struct UnitConversion: Sendable, Equatable {
  /// One unit: what it measures, and its value in the dimension's base unit (`value * scale +
  /// offset`; only temperatures have an offset).
  struct Unit: Sendable, Equatable {
    var symbol: String
    var dimension: String
    var scale: Double
    var offset: Double = 0
    var names: [String]
  }

  var value: Double
  var from: Unit
  var to: Unit

  /// The quantity in `to`.
  var result: Double {
    (value * from.scale + from.offset - to.offset) / to.scale
  }

  /// The units, each with the names it is written by (lowercase; Latin names are whole words).
  static let units: [Unit] = [
    Unit(
      symbol: "°C", dimension: "temperature", scale: 1,
      names: ["celsius", "centigrade", "°c", "℃", "degrees c", "摄氏度", "摄氏"]),
    Unit(
      symbol: "°F", dimension: "temperature", scale: 5.0 / 9.0, offset: -32 * 5.0 / 9.0,
      names: ["fahrenheit", "°f", "℉", "degrees f", "华氏度", "华氏"]),
    Unit(symbol: "K", dimension: "temperature", scale: 1, offset: -273.15, names: ["kelvin", "开尔文"]),
    Unit(
      symbol: "km", dimension: "length", scale: 1000,
      names: ["kilometers", "kilometres", "kilometer", "kilometre", "km", "kms", "公里", "千米"]),
    Unit(symbol: "m", dimension: "length", scale: 1, names: ["meters", "metres", "meter", "metre", "米"]),
    Unit(
      symbol: "cm", dimension: "length", scale: 0.01,
      names: ["centimeters", "centimetres", "centimeter", "centimetre", "cm", "厘米", "公分"]),
    Unit(
      symbol: "mm", dimension: "length", scale: 0.001,
      names: ["millimeters", "millimetres", "millimeter", "millimetre", "mm", "毫米"]),
    Unit(symbol: "mi", dimension: "length", scale: 1609.344, names: ["miles", "mile", "mi", "英里"]),
    Unit(symbol: "yd", dimension: "length", scale: 0.9144, names: ["yards", "yard", "yd"]),
    Unit(symbol: "ft", dimension: "length", scale: 0.3048, names: ["feet", "foot", "ft", "英尺"]),
    Unit(symbol: "in", dimension: "length", scale: 0.0254, names: ["inches", "inch", "英寸"]),
    Unit(
      symbol: "kg", dimension: "mass", scale: 1,
      names: ["kilograms", "kilogram", "kilos", "kilo", "kg", "kgs", "公斤", "千克"]),
    Unit(symbol: "g", dimension: "mass", scale: 0.001, names: ["grams", "gram", "克"]),
    Unit(symbol: "lb", dimension: "mass", scale: 0.45359237, names: ["pounds", "pound", "lbs", "lb", "磅"]),
    Unit(symbol: "oz", dimension: "mass", scale: 0.028349523125, names: ["ounces", "ounce", "oz", "盎司"]),
    Unit(symbol: "斤", dimension: "mass", scale: 0.5, names: ["斤"]),
    Unit(symbol: "L", dimension: "volume", scale: 1, names: ["liters", "litres", "liter", "litre", "升"]),
    Unit(
      symbol: "ml", dimension: "volume", scale: 0.001,
      names: ["milliliters", "millilitres", "milliliter", "millilitre", "ml", "毫升"]),
    Unit(symbol: "gal", dimension: "volume", scale: 3.785411784, names: ["gallons", "gallon", "gal", "加仑"]),
    Unit(symbol: "cup", dimension: "volume", scale: 0.2365882365, names: ["cups", "cup"]),
  ]

  /// Every unit name, longest first, so "kilometers" is read before "meters" and 摄氏度 before 度.
  private static let names: [(name: String, unit: Unit)] =
    units.flatMap { unit in unit.names.map { (name: $0, unit: unit) } }
    .sorted { $0.name.count > $1.name.count }

  /// The conversion `text` asks for: exactly one number, and two units of one dimension, the
  /// one right after the number being what it is in; nil otherwise ("run 5 km" names one unit).
  static func parse(_ text: String) -> UnitConversion? {
    let lower = text.lowercased()
    let numbers = ArithmeticExpression.numbers(in: lower)
    guard numbers.count == 1, !numbers[0].percent,
      let numberRange = lower.range(of: numbers[0].text)
    else { return nil }
    var found: [(range: Range<String.Index>, unit: Unit)] = []
    var taken: [Range<String.Index>] = []
    for (name, unit) in names {
      var searchFrom = lower.startIndex
      while let range = lower.range(of: name, range: searchFrom..<lower.endIndex) {
        searchFrom = range.upperBound
        if taken.contains(where: { $0.overlaps(range) }) { continue }
        if name.first?.isLetter == true, name.first?.isASCII == true {
          // A whole word, or a symbol written right after the number ("3.5km").
          let before =
            range.lowerBound == lower.startIndex ? nil : lower[lower.index(before: range.lowerBound)]
          let after = range.upperBound == lower.endIndex ? nil : lower[range.upperBound]
          if before?.isLetter == true || after?.isLetter == true { continue }
        }
        taken.append(range)
        found.append((range, unit))
      }
    }
    let distinct = found.reduce(into: [(range: Range<String.Index>, unit: Unit)]()) { result, item in
      if !result.contains(where: { $0.unit == item.unit }) { result.append(item) }
    }
    guard distinct.count == 2, distinct[0].unit.dimension == distinct[1].unit.dimension else { return nil }
    // What the number is in: the unit nearest after it.
    let after = distinct.filter { $0.range.lowerBound >= numberRange.upperBound }
      .min { $0.range.lowerBound < $1.range.lowerBound }
    guard let from = after?.unit, let to = distinct.first(where: { $0.unit != from })?.unit else {
      return nil
    }
    // A minus sign right before the number, at the start or after a space ("-40°F"), or 负.
    let before = lower[..<numberRange.lowerBound]
    let signed =
      (before.last == "-" && (before.dropLast().last.map { $0 == " " } ?? true)) || before.hasSuffix("负")
    let value = numbers[0].value
    return UnitConversion(value: signed && value > 0 ? -value : value, from: from, to: to)
  }
}
