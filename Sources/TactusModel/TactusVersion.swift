/// The version of Tactus, as `tactus --version` prints it and exported files name their maker.
public enum TactusVersion {
    public static let current = "0.1.0"
}
