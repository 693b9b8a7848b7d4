import CFFTW
import Foundation

/// FFTW's planner decisions for the transforms Tactus makes ("wisdom", in FFTW's words),
/// recorded once by its estimating planner (`FFTW_ESTIMATE`, the flag every plan here uses)
/// and loaded before the first plan of a process.
///
/// Planning is most of the cost of a transform made once: FFTW tries its algorithms for each
/// new size and kind, about 0.6 to 2.5 ms each, 4 ms in one `tactus analyze` of a 44.1 kHz
/// song. With the recorded decisions a plan takes a few hundredths of a millisecond. The plans
/// are the ones FFTW would make without them (same algorithms, so the same results to the
/// bit); FFTW ignores wisdom of another version or for instructions the processor lacks, and
/// plans a size the recording does not hold as usual.
///
/// ``RealFFT`` and ``ComplexFFT`` load it; `tactus-bench wisdom` records it again
/// (``record(_:)``), into `FFTWisdom+Recorded.swift`.
public enum FFTWisdom {
    /// Loads ``recorded`` into FFTW, once per process (the first plan's caller pays a third of
    /// a millisecond); true when FFTW accepted it.
    static let loaded: Bool = {
        plannerLock.lock()
        defer { plannerLock.unlock() }
        return fftwf_import_wisdom_from_string(recorded) != 0
    }()

    /// Whether FFTW accepted the recorded wisdom (false with another FFTW version).
    public static var isLoaded: Bool { loaded }

    /// The wisdom FFTW gathers while `plan` makes plans, starting from none: what
    /// `tactus-bench wisdom` records. The recorded wisdom is loaded again afterwards.
    public static func record(_ plan: () -> Void) -> String {
        _ = loaded
        plannerLock.lock()
        fftwf_forget_wisdom()
        plannerLock.unlock()
        plan()
        plannerLock.lock()
        defer { plannerLock.unlock() }
        defer {
            fftwf_forget_wisdom()
            fftwf_import_wisdom_from_string(recorded)
        }
        guard let text = fftwf_export_wisdom_to_string() else { return "" }
        defer { free(text) }
        return String(cString: text)
    }

    /// Whether the recording was made by an FFTW configured as this process's: the same
    /// version, and the same instruction sets found on this processor (FFTW's wisdom starts with
    /// their checksums, and FFTW refuses wisdom whose checksums are not its own).
    public static var recordingFitsThisFFTW: Bool {
        let here = record {
            let fft = RealFFT(size: 16)
            fft.forward()
        }
        return here.split(separator: "\n").first == recorded.split(separator: "\n").first
    }

    /// FFTW's description of the plan it makes for a real forward transform of `size` samples
    /// (with the wisdom loaded, or with none when `withoutWisdom`; the loaded wisdom is
    /// restored afterwards): the same text both ways means the recording changes nothing.
    public static func realPlanDescription(size: Int, withoutWisdom: Bool) -> String {
        _ = loaded
        plannerLock.lock()
        defer { plannerLock.unlock() }
        if withoutWisdom { fftwf_forget_wisdom() }
        defer {
            if withoutWisdom {
                // Only the recording again: what this plan taught FFTW is forgotten too.
                fftwf_forget_wisdom()
                fftwf_import_wisdom_from_string(recorded)
            }
        }
        let real = fftwf_alloc_real(size)!
        let complex = fftwf_alloc_complex(size / 2 + 1)!
        defer {
            fftwf_free(real)
            fftwf_free(complex)
        }
        guard let plan = fftwf_plan_dft_r2c_1d(Int32(size), real, complex, UInt32(FFTW_ESTIMATE)) else { return "" }
        defer { fftwf_destroy_plan(plan) }
        guard let text = fftwf_sprint_plan(plan) else { return "" }
        defer { free(text) }
        return String(cString: text)
    }
}
