import AutocorrelationDetector
import CombFilterDetector
import StatisticalEnergyDetector
import TactusDetector

/// The detectors built into Tactus.
///
/// Adding one: a folder under `Plugins/` with a type conforming to `TempoDetector`, a line in
/// `builtinDetectors` of `Package.swift`, and one registration line below.
public enum BuiltinDetectors {
    /// Every built-in detector, in the order `tactus detectors` lists them and `analyze` runs them.
    public static let registry = DetectorRegistry([
        CombFilterDetector.self,
        StatisticalEnergyDetector.self,
        AutocorrelationDetector.self,
    ])
}
