import EngramCore
import Foundation

/// The instant the store suites write at (as EngramStoreTests' `t0`).
let t0 = Date(timeIntervalSince1970: 1_700_000_000)
/// `t0` in the milliseconds the store's columns and time filters use.
let t0ms: Int64 = 1_700_000_000_000
