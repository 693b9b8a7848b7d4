extension Array where Element == Float {
    /// Calls `body` with the samples in consecutive blocks of `size` (the last one shorter),
    /// as a decoder hands a song over: how a whole signal held in memory is fed to a session.
    public func forEachBlock(of size: Int, _ body: (UnsafeBufferPointer<Float>) -> Void) {
        precondition(size > 0, "a block holds at least one sample")
        withUnsafeBufferPointer { all in
            var start = 0
            while start < all.count {
                let end = Swift.min(start + size, all.count)
                body(UnsafeBufferPointer(rebasing: all[start..<end]))
                start = end
            }
        }
    }
}
