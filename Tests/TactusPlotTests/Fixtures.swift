import TactusTestSupport

/// The figure fixtures, by their short name in these tests.
typealias Sample = LibraryFixture.Figures
