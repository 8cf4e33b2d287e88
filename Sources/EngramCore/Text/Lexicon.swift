/// The closed word classes every reader of text shares: English month names, number words in
/// English and Chinese, the plainest retractions, and English stopwords.
///
/// The keyword index's day text, the re-ranker's cues, the date readers, the summarizer and
/// the agent's rules read these lists, so a word added here is added for all of them. Words
/// one skill matches stay in that skill's data (`skill-words.json`, `date-words.json`).
public enum Lexicon {
  /// English month names, January first, capitalized as written ("8 May 2023").
  public static let months = [
    "January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
    "November", "December",
  ]

  /// `months` in lowercase, January first.
  public static let lowercasedMonths = months.map { $0.lowercased() }

  /// English number words and their values: zero to nineteen, the tens, and the scales.
  public static let englishNumbers: [String: Int] = [
    "zero": 0, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8,
    "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13, "fourteen": 14, "fifteen": 15,
    "sixteen": 16, "seventeen": 17, "eighteen": 18, "nineteen": 19, "twenty": 20, "thirty": 30, "forty": 40,
    "fifty": 50, "sixty": 60, "seventy": 70, "eighty": 80, "ninety": 90, "hundred": 100, "thousand": 1000,
    "million": 1_000_000,
  ]

  /// Chinese digits and their values (零 and 〇 are zero, 两 is two).
  public static let chineseDigits: [Character: Int] = [
    "零": 0, "〇": 0, "一": 1, "二": 2, "两": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7, "八": 8, "九": 9,
  ]

  /// Chinese units below ten thousand (十, 百, 千) and their values.
  public static let chineseUnits: [Character: Int] = ["十": 10, "百": 100, "千": 1000]

  /// The plainest ways to take back a request or drop a question ("never mind", 算了), in
  /// lowercase without punctuation.
  public static let retractions: Set<String> = [
    "cancel", "never mind", "nevermind", "forget it", "stop", "no", "算了", "取消", "不用了",
  ]

  /// English function words that carry no search meaning on their own (compared in
  /// lowercase, before stemming). "may" is left out: it is also a month, and turns are
  /// indexed with their day.
  public static let stopwords: Set<String> = [
    "a", "about", "above", "after", "again", "against", "all", "am", "an", "and", "any", "are", "as", "at",
    "be", "because", "been", "before", "being", "below", "between", "both", "but", "by", "can", "could",
    "d", "did", "do", "does", "doing", "down", "during", "each", "few", "for", "from", "further", "had",
    "has", "have", "having", "he", "her", "here", "hers", "herself", "him", "himself", "his", "how", "i",
    "if", "in", "into", "is", "it", "its", "itself", "just", "ll", "m", "me", "more", "most", "my",
    "myself", "no", "nor", "not", "now", "of", "off", "on", "once", "only", "or", "other", "our", "ours",
    "ourselves", "out", "over", "own", "re", "s", "same", "she", "should", "so", "some", "such", "t",
    "than", "that", "the", "their", "theirs", "them", "themselves", "then", "there", "these", "they",
    "this", "those", "through", "to", "too", "under", "until", "up", "ve", "very", "was", "we", "were",
    "what", "when", "where", "which", "while", "who", "whom", "why", "will", "with", "would", "you",
    "your", "yours", "yourself", "yourselves",
  ]
}
