import TactusTestSupport

/// The library fixture, by its short name in these tests.
typealias Fixture = LibraryFixture

/// Rounds like the BLOB does.
func float32(_ value: Double) -> Double { Double(Float(value)) }
