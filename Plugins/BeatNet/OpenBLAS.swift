import Foundation

/// OpenBLAS's two products that ``BeatNetNetwork`` uses, loaded from `libopenblas.so.0` when
/// the first network is made rather than with the program.
///
/// OpenBLAS starts a thread per core as soon as it is loaded, and those threads spin waiting
/// for work: linked into `tactus`, they cost every process about 0.1 s of CPU, though only
/// `beatnet` uses them. Loaded late, OpenBLAS is asked for one thread first
/// (`OPENBLAS_NUM_THREADS=1`, unless the environment already says otherwise): the network's
/// matrices are small, and a worker runs one song per core.
///
/// ```swift
/// let blas = try OpenBLAS.shared.get()
/// blas.sgemm(OpenBLAS.rowMajor, OpenBLAS.noTranspose, OpenBLAS.transpose, m, n, k, 1, a, k, b, k, 0, c, n)
/// ```
struct OpenBLAS: Sendable {
    /// `cblas_sgemm`: C = alpha A B + beta C, each operand optionally transposed.
    typealias MatrixProduct = @convention(c) (
        Int32, Int32, Int32, Int32, Int32, Int32, Float, UnsafePointer<Float>?, Int32,
        UnsafePointer<Float>?, Int32, Float, UnsafeMutablePointer<Float>?, Int32
    ) -> Void
    /// `cblas_sgemv`: y = alpha A x + beta y.
    typealias MatrixVectorProduct = @convention(c) (
        Int32, Int32, Int32, Int32, Float, UnsafePointer<Float>?, Int32, UnsafePointer<Float>?, Int32, Float,
        UnsafeMutablePointer<Float>?, Int32
    ) -> Void

    /// CBLAS's `CblasRowMajor`, `CblasNoTrans` and `CblasTrans`.
    static let rowMajor: Int32 = 101
    static let noTranspose: Int32 = 111
    static let transpose: Int32 = 112

    /// Why OpenBLAS could not be used.
    struct LoadFailure: Error, Sendable, CustomStringConvertible {
        let description: String
    }

    /// The shared library's name (Debian's `libopenblas0`, installed with `libopenblas-dev`).
    static let library = "libopenblas.so.0"

    /// OpenBLAS, loaded by the first caller.
    static let shared: Result<OpenBLAS, LoadFailure> = load()

    let sgemm: MatrixProduct
    let sgemv: MatrixVectorProduct

    private static func load() -> Result<OpenBLAS, LoadFailure> {
        // Read by OpenBLAS when it is loaded: its thread pool then has no extra thread.
        setenv("OPENBLAS_NUM_THREADS", "1", 0)
        guard let handle = dlopen(library, RTLD_NOW | RTLD_LOCAL) else {
            return .failure(LoadFailure(description: "beatnet needs OpenBLAS: \(dlerror().map { String(cString: $0) } ?? library)"))
        }
        guard let sgemm = dlsym(handle, "cblas_sgemm"), let sgemv = dlsym(handle, "cblas_sgemv") else {
            return .failure(LoadFailure(description: "beatnet needs OpenBLAS: \(library) has no cblas_sgemm or cblas_sgemv"))
        }
        return .success(OpenBLAS(
            sgemm: unsafeBitCast(sgemm, to: MatrixProduct.self), sgemv: unsafeBitCast(sgemv, to: MatrixVectorProduct.self)))
    }
}
