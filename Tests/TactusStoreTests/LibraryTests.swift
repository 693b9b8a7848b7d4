import Testing
@testable import TactusStore
