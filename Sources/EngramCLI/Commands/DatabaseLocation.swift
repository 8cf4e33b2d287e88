import Foundation

/// Where the memory database lives when `--db` is not given.
public enum DatabaseLocation {
  /// The database file name inside the data folder.
  public static let fileName = "memory.sqlite"

  /// `option` if given, else `$ENGRAM_DB`, else `<data folder>/engram/memory.sqlite`.
  ///
  /// The data folder is `$XDG_DATA_HOME`, else `~/Library/Application Support` on Apple platforms
  /// and `~/.local/share` elsewhere. A leading `~/` is expanded with `$HOME`.
  public static func resolve(option: String?, environment: [String: String]) -> String {
    let home = environment["HOME"] ?? NSHomeDirectory()
    func expand(_ path: String) -> String {
      if path == "~" { return home }
      if path.hasPrefix("~/") { return home + path.dropFirst(1) }
      return path
    }
    if let option, !option.isEmpty { return expand(option) }
    if let fromEnvironment = environment["ENGRAM_DB"], !fromEnvironment.isEmpty {
      return expand(fromEnvironment)
    }
    let dataHome: String
    if let xdg = environment["XDG_DATA_HOME"], xdg.hasPrefix("/") {
      dataHome = xdg
    } else {
      #if canImport(Darwin)
        dataHome = home + "/Library/Application Support"
      #else
        dataHome = home + "/.local/share"
      #endif
    }
    return dataHome + "/engram/" + fileName
  }
}
