/// Rounds like the BLOB does.
func float32(_ value: Double) -> Double { Double(Float(value)) }
