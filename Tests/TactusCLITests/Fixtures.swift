import TactusTestSupport

/// The library fixtures, by their short names in these tests.
typealias Fixture = LibraryFixture
typealias Sample = LibraryFixture.Figures
