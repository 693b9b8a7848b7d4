#if canImport(Glibc)
import Glibc
#endif

/// The C heap of this process, which Swift's arrays and strings also live in.
public enum SystemHeap {
    /// Hands the memory glibc keeps in its arenas after large blocks were freed back to the
    /// system (`malloc_trim(0)`): a few milliseconds. A long-lived server that built a large
    /// answer or took a burst of large messages otherwise keeps that memory for good.
    public static func trim() {
        _ = mallocTrim?(0)
    }

    /// glibc's `malloc_trim` (its `malloc.h` is not part of the Glibc module, so the function is
    /// looked up by name); nil where there is none.
    private static let mallocTrim: (@convention(c) (Int) -> Int32)? = {
        #if canImport(Glibc)
        guard let symbol = dlsym(dlopen(nil, RTLD_NOW), "malloc_trim") else { return nil }
        return unsafeBitCast(symbol, to: (@convention(c) (Int) -> Int32).self)
        #else
        return nil
        #endif
    }()
}
