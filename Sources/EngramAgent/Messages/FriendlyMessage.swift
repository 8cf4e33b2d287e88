/// The one place that turns agent errors into sentences a person reads, in English or Chinese.
public enum FriendlyMessage {
  /// A sentence for `error` in `language`. Unknown errors get a generic sentence.
  public static func text(for error: any Error, language: MessageLanguage) -> String {
    if let error = error as? SkillError { return text(for: error, language: language) }
    if let error = error as? PlannerError { return text(for: error, language: language) }
    if let error = error as? SkillRegistryError { return text(for: error, language: language) }
    if let error = error as? LanguageModelError { return text(for: error, language: language) }
    if let error = error as? WeatherError { return text(for: error, language: language) }
    switch language {
    case .english: return "Something went wrong. Please try again."
    case .chinese: return "出了点问题，请再试一次。"
    }
  }

  /// A sentence for a skill error.
  public static func text(for error: SkillError, language: MessageLanguage) -> String {
    switch (error, language) {
    case (.missingArgument(let name), .english):
      return "I need the \(englishName(name)) to do that. Could you tell me?"
    case (.missingArgument(let name), .chinese):
      return "还缺少\(chineseName(name))，能告诉我吗？"
    case (.invalidArgument(let name, let reason), .english):
      return "The \(englishName(name)) doesn't look right: \(englishReason(reason))."
    case (.invalidArgument(let name, let reason), .chinese):
      return "\(chineseName(name))好像不对：\(chineseReason(reason))。"
    case (.permissionDenied, .english):
      return "I'm not allowed to do that."
    case (.permissionDenied, .chinese):
      return "我没有权限这样做。"
    case (.timeout, .english):
      return "That took too long, so I stopped. Please try again."
    case (.timeout, .chinese):
      return "这件事花的时间太长，我先停下了，请再试一次。"
    case (.executionFailed, .english):
      return "I couldn't finish that. Please try again."
    case (.executionFailed, .chinese):
      return "这件事没能完成，请再试一次。"
    case (.confirmationCancelled, .english):
      return "OK, I cancelled it. Nothing was changed."
    case (.confirmationCancelled, .chinese):
      return "好的，已取消，没有做任何改动。"
    case (.divisionByZero, .english):
      return "That would divide by zero, which has no answer."
    case (.divisionByZero, .chinese):
      return "不能除以零。"
    case (.unreadableDate(let name, let text), .english):
      let what = name == "when" ? "date or time" : englishName(name)
      return "I couldn't read “\(text)” as a \(what). Could you say it another way, like “June 20 at 3pm”?"
    case (.unreadableDate(let name, let text), .chinese):
      let what = name == "when" ? "日期或时间" : chineseName(name)
      return "我看不懂「\(text)」这个\(what)，能换个说法吗？比如「6月20日下午3点」。"
    }
  }

  /// A sentence for a planner error.
  public static func text(for error: PlannerError, language: MessageLanguage) -> String {
    switch language {
    case .english: return "I couldn't work out how to do that. Could you rephrase?"
    case .chinese: return "我没弄明白该怎么做，能换个说法吗？"
    }
  }

  /// A sentence for a registry error.
  public static func text(for error: SkillRegistryError, language: MessageLanguage) -> String {
    switch (error, language) {
    case (.skillDisabled(let id), .english): return "The skill \(id) is turned off."
    case (.skillDisabled(let id), .chinese): return "技能 \(id) 已被关闭。"
    case (_, .english): return "That skill isn't available."
    case (_, .chinese): return "这个技能不可用。"
    }
  }

  /// A sentence for a language-model error.
  public static func text(for error: LanguageModelError, language: MessageLanguage) -> String {
    switch (error, language) {
    case (.timedOut, .english): return "The language model took too long to answer."
    case (.timedOut, .chinese): return "语言模型响应超时。"
    case (_, .english): return "I couldn't reach the language model."
    case (_, .chinese): return "无法连接语言模型。"
    }
  }

  /// One line saying the language model failed and the reply is memory's answer alone.
  public static func fallbackNotice(for error: any Error, language: MessageLanguage) -> String {
    let english: String
    let chinese: String
    switch error {
    case LanguageModelError.timedOut(let seconds):
      english = "The language model did not answer within \(Int(seconds.rounded())) s"
      chinese = "语言模型在 \(Int(seconds.rounded())) 秒内没有回答"
    case LanguageModelError.incompleteStream:
      english = "The language model stopped in the middle of its reply"
      chinese = "语言模型的回答中途断了"
    case LanguageModelError.httpStatus(let code, _):
      english = "The language model server answered with HTTP status \(code)"
      chinese = "语言模型服务返回了 HTTP 状态 \(code)"
    case LanguageModelError.serverError:
      english = "The language model server reported an error"
      chinese = "语言模型服务报告了错误"
    case is PlannerError, LanguageModelError.malformedResponse:
      english = "The language model's reply could not be used"
      chinese = "语言模型的回答无法使用"
    default:
      english = "I couldn't reach the language model"
      chinese = "无法连接语言模型"
    }
    return language == .english
      ? "\(english); this answer is from your memories alone." : "\(chinese)；以下回答只来自你的记忆。"
  }

  /// A sentence for a weather-service error.
  public static func text(for error: WeatherError, language: MessageLanguage) -> String {
    switch (error, language) {
    case (.invalidBaseURL, .english):
      return
        "The weather service address isn't a valid URL; check ENGRAM_WEATHER_URL and ENGRAM_GEOCODING_URL."
    case (.invalidBaseURL, .chinese): return "天气服务的地址无效，请检查 ENGRAM_WEATHER_URL 和 ENGRAM_GEOCODING_URL。"
    case (.insecureEndpoint, .english):
      return "The weather service address must use https unless it is on this machine."
    case (.insecureEndpoint, .chinese): return "天气服务的地址必须使用 https（本机地址除外）。"
    case (.timedOut, .english):
      return "The weather service took too long to answer. Please try again in a moment."
    case (.timedOut, .chinese): return "天气服务响应超时，请稍后再试。"
    case (.unreachable, .english):
      return "I couldn't reach the weather service. Please check the connection and try again."
    case (.unreachable, .chinese): return "无法连接天气服务，请检查网络后再试。"
    case (.httpStatus, .english):
      return "The weather service couldn't answer right now. Please try again later."
    case (.httpStatus, .chinese): return "天气服务暂时无法回答，请稍后再试。"
    case (.malformedResponse, .english):
      return "The weather service sent an answer I couldn't read. Please try again later."
    case (.malformedResponse, .chinese): return "天气服务返回的内容我看不懂，请稍后再试。"
    }
  }

  private static func englishName(_ name: String) -> String {
    switch name {
    case "when": return "date and time"
    case "title": return "title"
    case "content": return "content"
    case "expression": return "expression"
    case "id": return "memory id"
    case "query": return "question"
    case "city": return "city"
    case "day": return "day"
    case "zone": return "time zone"
    case "place": return "place"
    default: return "\"\(name)\""
    }
  }

  private static func chineseName(_ name: String) -> String {
    switch name {
    case "when": return "时间"
    case "title": return "标题"
    case "content": return "内容"
    case "expression": return "算式"
    case "id": return "记忆编号"
    case "query": return "问题"
    case "city": return "城市"
    case "day": return "日期"
    case "zone": return "时区"
    case "place": return "地点"
    default: return "参数「\(name)」"
    }
  }

  private static func englishReason(_ reason: InvalidArgumentReason) -> String {
    switch reason {
    case .expectedType(let type, let value): return "expected \(englishType(type)), got \"\(value)\""
    case .empty: return "it is empty"
    case .notFinite: return "it is not a finite number"
    case .unknownParameter: return "this skill doesn't take it"
    case .arithmetic(let error): return englishArithmetic(error)
    case .other(let text): return text
    }
  }

  /// What is wrong with an arithmetic expression, as the end of an English sentence.
  private static func englishArithmetic(_ error: ArithmeticError) -> String {
    switch error {
    case .empty: return "there is no arithmetic in it"
    case .unexpectedCharacter(let character, let position):
      return "I can't read “\(character)” (character \(position + 1)) as arithmetic"
    case .unknownWord(let word, _):
      return "I don't know the word “\(word)” in arithmetic; try numbers with + - × ÷, ^, roots or %"
    case .unexpectedToken(let token, _) where token == "end": return "it ends before the last number"
    case .unexpectedToken(let token, let position):
      return "“\(token)” is out of place (character \(position + 1))"
    case .unbalancedParenthesis: return "a parenthesis is opened and never closed"
    case .divisionByZero: return "it divides by zero, which has no answer"
    case .notFinite: return "the result is too large to show"
    case .notReal: return "it has no real value (an even root or a fractional power of a negative number)"
    case .tooDeep: return "it is nested too deeply"
    case .tooLong: return "it is too long (at most \(ArithmeticExpression.maximumLength) characters)"
    }
  }

  /// What is wrong with an arithmetic expression, as the end of a Chinese sentence.
  private static func chineseArithmetic(_ error: ArithmeticError) -> String {
    switch error {
    case .empty: return "里面没有算式"
    case .unexpectedCharacter(let character, let position): return "看不懂第\(position + 1)个字符「\(character)」"
    case .unknownWord(let word, _): return "不认识「\(word)」这个词，可以用数字和加减乘除、乘方、开方或百分比"
    case .unexpectedToken(let token, _) where token == "end": return "算式还没写完"
    case .unexpectedToken(let token, let position): return "第\(position + 1)个字符的「\(token)」位置不对"
    case .unbalancedParenthesis: return "有括号没有闭合"
    case .divisionByZero: return "不能除以零"
    case .notFinite: return "结果太大，无法显示"
    case .notReal: return "没有实数结果（负数不能开偶次方或取小数次方）"
    case .tooDeep: return "括号嵌套太深"
    case .tooLong: return "算式太长（最多\(ArithmeticExpression.maximumLength)个字符）"
    }
  }

  private static func chineseReason(_ reason: InvalidArgumentReason) -> String {
    switch reason {
    case .expectedType(let type, let value): return "应为\(chineseType(type))，收到的是「\(value)」"
    case .empty: return "内容为空"
    case .notFinite: return "不是有效的数字"
    case .unknownParameter: return "这个技能不接受它"
    case .arithmetic(let error): return chineseArithmetic(error)
    case .other(let text): return text
    }
  }

  private static func englishType(_ type: ParameterType) -> String {
    switch type {
    case .string: return "text"
    case .int: return "a whole number"
    case .number: return "a number"
    case .bool: return "yes or no"
    case .date: return "a date"
    }
  }

  private static func chineseType(_ type: ParameterType) -> String {
    switch type {
    case .string: return "文本"
    case .int: return "整数"
    case .number: return "数字"
    case .bool: return "是或否"
    case .date: return "日期"
    }
  }
}
