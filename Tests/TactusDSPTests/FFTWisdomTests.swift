import Testing
import TactusDSP

/// The recorded FFTW wisdom (`tactus-bench wisdom`) loads, and the plans made with it are the
/// ones FFTW makes without it, so results do not depend on it.
@Suite struct FFTWisdomTests {
    /// Whether this machine is of the kind the wisdom was recorded on (its plans name x86-64
    /// codelets; elsewhere FFTW plans as usual).
    static let recordedHere: Bool = {
        #if arch(x86_64)
        true
        #else
        false
        #endif
    }()

    /// FFTW refuses wisdom recorded by another version: this fails after an FFTW upgrade, until
    /// `tactus-bench wisdom --write Sources/TactusDSP/FFTWisdom+Recorded.swift` records it again.
    @Test(.enabled(if: recordedHere, "the recorded wisdom names x86-64 codelets"))
    func theRecordedWisdomLoads() {
        #expect(FFTWisdom.isLoaded)
    }

    /// A spectrogram's frames at 44.1 and 48 kHz, an autocorrelation's transforms, and a size
    /// the recording does not hold.
    @Test(arguments: [1024, 1152, 4096, 65536, 3 * 7 * 64])
    func aPlanMadeWithTheWisdomIsThePlanMadeWithout(size: Int) {
        let without = FFTWisdom.realPlanDescription(size: size, withoutWisdom: true)
        let with = FFTWisdom.realPlanDescription(size: size, withoutWisdom: false)
        #expect(!with.isEmpty)
        #expect(with == without)
    }
}
