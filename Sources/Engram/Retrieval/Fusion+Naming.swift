extension Fusion {
  /// The least cosine at which a hit that also matched by keyword counts as named by the
  /// query (`names(_:query:)`).
  static let namingCosine = 0.5

  /// Whether `query` actually names `hit`, not merely ranks it: both retrievers agree (a
  /// keyword match with a cosine of at least ``namingCosine``), or the hit's text contains
  /// the query (case ignored). What `memories.forget(matching:)` deletes.
  static func names(_ hit: SearchHit, query: String) -> Bool {
    (hit.bm25 != nil && (hit.cosine ?? 0) >= namingCosine)
      || hit.text.lowercased().contains(query.lowercased())
  }
}
