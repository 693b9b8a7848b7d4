import Foundation
import Testing

@testable import BeatNetDetector

/// OpenBLAS is loaded by the first network, asked for one thread, and missing from the
/// `tactus` executable's own dependencies (loaded with the program, its idle thread pool
/// costs every command about 0.1 s of CPU).
@Suite struct OpenBLASTests {
    @Test func theLibraryIsLoadedWithOneThread() throws {
        let blas = try OpenBLAS.shared.get()
        let handle = try #require(dlopen(OpenBLAS.library, RTLD_NOW | RTLD_NOLOAD))
        let threads = try #require(dlsym(handle, "openblas_get_num_threads"))
        let count = unsafeBitCast(threads, to: (@convention(c) () -> Int32).self)()
        if ProcessInfo.processInfo.environment["OPENBLAS_NUM_THREADS"] == nil {
            #expect(count == 1)
        }
        // A 2x2 product through the loaded function: [[1, 2], [3, 4]] times its transpose.
        let a: [Float] = [1, 2, 3, 4]
        var c = [Float](repeating: 0, count: 4)
        blas.sgemm(OpenBLAS.rowMajor, OpenBLAS.noTranspose, OpenBLAS.transpose, 2, 2, 2, 1, a, 2, a, 2, 0, &c, 2)
        #expect(c == [5, 11, 11, 25])
    }
}
