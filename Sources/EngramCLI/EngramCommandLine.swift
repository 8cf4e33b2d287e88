import Foundation

/// The entry point of the `engram` tool.
public enum EngramCommandLine {
  /// The tool's version.
  public static let version = "0.1.0"

  /// Runs the command line and exits with its status.
  public static func main() async {
    print("engram \(version)")
  }
}
