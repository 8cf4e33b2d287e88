import EngramTestSupport
import Testing

@testable import EngramCore

@Suite(.timeLimit(.minutes(5)), .watchdog) struct EnglishStemmerTests {
  /// The sample vocabulary of the Snowball English stemmer's page and its published output.
  static let standardExamples: [(String, String)] = [
    ("consign", "consign"), ("consigned", "consign"), ("consigning", "consign"), ("consignment", "consign"),
    ("consist", "consist"), ("consisted", "consist"), ("consistency", "consist"), ("consistent", "consist"),
    ("consistently", "consist"), ("consisting", "consist"), ("consists", "consist"),
    ("consolation", "consol"), ("consolations", "consol"), ("consolatory", "consolatori"),
    ("console", "consol"), ("consoled", "consol"), ("consoles", "consol"), ("consolidate", "consolid"),
    ("consolidated", "consolid"), ("consolidating", "consolid"), ("consoling", "consol"),
    ("consolingly", "consol"), ("consols", "consol"), ("consonant", "conson"), ("consort", "consort"),
    ("consorted", "consort"), ("consorting", "consort"), ("conspicuous", "conspicu"),
    ("conspicuously", "conspicu"), ("conspiracy", "conspiraci"), ("conspirator", "conspir"),
    ("conspirators", "conspir"), ("conspire", "conspir"), ("conspired", "conspir"), ("conspiring", "conspir"),
    ("constable", "constabl"), ("constables", "constabl"), ("constance", "constanc"),
    ("constancy", "constanc"), ("constant", "constant"), ("knack", "knack"), ("knackeries", "knackeri"),
    ("knacks", "knack"), ("knag", "knag"), ("knave", "knave"), ("knaves", "knave"), ("knavish", "knavish"),
    ("kneaded", "knead"), ("kneading", "knead"), ("knee", "knee"), ("kneel", "kneel"), ("kneeled", "kneel"),
    ("kneeling", "kneel"), ("kneels", "kneel"), ("knees", "knee"), ("knell", "knell"), ("knelt", "knelt"),
    ("knew", "knew"), ("knick", "knick"), ("knif", "knif"), ("knife", "knife"), ("knight", "knight"),
    ("knightly", "knight"), ("knights", "knight"), ("knit", "knit"), ("knits", "knit"), ("knitted", "knit"),
    ("knitting", "knit"), ("knives", "knive"), ("knob", "knob"), ("knobs", "knob"), ("knock", "knock"),
    ("knocked", "knock"), ("knocker", "knocker"), ("knockers", "knocker"), ("knocking", "knock"),
    ("knocks", "knock"), ("knopp", "knopp"), ("knot", "knot"), ("knots", "knot"),
  ]

  @Test func stemsTheStandardVocabulary() {
    for (word, stem) in Self.standardExamples {
      #expect(EnglishStemmer.stem(word) == stem, "\(word)")
    }
  }

  /// One case per rule the sample does not reach: the exceptional forms, the R1 prefixes,
  /// the "-ying" and kept "-ing"/"-eed" stems, the double-consonant and short-word rules of
  /// step 1b, and steps 1a to 5.
  @Test(arguments: [
    ("skis", "ski"), ("skies", "sky"), ("sky", "sky"), ("news", "news"), ("howe", "howe"),
    ("atlas", "atlas"), ("cosmos", "cosmos"), ("bias", "bias"), ("andes", "andes"), ("idly", "idl"),
    ("gently", "gentl"), ("ugly", "ugli"), ("early", "earli"), ("only", "onli"), ("singly", "singl"),
    ("dying", "die"), ("lying", "lie"), ("tying", "tie"), ("inning", "inning"), ("outing", "outing"),
    ("canning", "canning"), ("herring", "herring"), ("earring", "earring"), ("evening", "evening"),
    ("proceed", "proceed"), ("exceed", "exceed"), ("succeed", "succeed"), ("agreed", "agre"),
    ("adding", "add"), ("hopping", "hop"), ("hoping", "hope"), ("pasted", "paste"),
    ("generously", "generous"), ("university", "universiti"), ("communism", "communism"),
    ("emergency", "emergenc"), ("internal", "internal"), ("organization", "organiz"),
    ("geologist", "geolog"), ("ties", "tie"), ("cries", "cri"), ("gas", "gas"), ("gaps", "gap"),
    ("kiwis", "kiwi"), ("caresses", "caress"), ("happy", "happi"), ("enjoy", "enjoy"), ("sayings", "say"),
    ("relational", "relat"), ("hopefulness", "hope"), ("formalize", "formal"), ("electrical", "electr"),
    ("adjustment", "adjust"), ("adoption", "adopt"), ("walking", "walk"), ("walked", "walk"),
    ("walks", "walk"), ("ann's", "ann"), ("'quoted", "quot"),
  ])
  func followsEachRule(word: String, stem: String) {
    #expect(EnglishStemmer.stem(word) == stem)
  }

  @Test func leavesShortAndNonLetterWordsAlone() {
    #expect(EnglishStemmer.stem("is") == "is")
    #expect(EnglishStemmer.stem("a") == "a")
    #expect(EnglishStemmer.stem("") == "")
    #expect(EnglishStemmer.stem("42nd") == "42nd")
    #expect(EnglishStemmer.stem("café") == "café")
    #expect(EnglishStemmer.stem("Walking") == "Walking")  // capitals only with lowercasing
    let long = String(repeating: "walking", count: 7)
    #expect(EnglishStemmer.stem(long) == long)
  }

  @Test func lowercasesWhenAsked() {
    var stemmer = EnglishStemmer()
    let stem = Array("WaLKing".utf8).withUnsafeBufferPointer { word in
      stemmer.stem(word, lowercasing: true) { String(decoding: $0, as: UTF8.self) }
    }
    #expect(stem == "walk")
  }

  @Test func reusesItsBufferAcrossWords() {
    var stemmer = EnglishStemmer()
    var stems: [String] = []
    for word in ["consolingly", "knots", "a", "gaps"] {
      let stem = Array(word.utf8).withUnsafeBufferPointer {
        stemmer.stem($0) { String(decoding: $0, as: UTF8.self) }
      }
      stems.append(stem ?? "-")
    }
    #expect(stems == ["consol", "knot", "a", "gap"])
  }
}
