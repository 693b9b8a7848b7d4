import Testing
import TactusDSP

/// The recorded FFTW wisdom (`tactus-bench wisdom`) loads, and the plans made with it are the
/// ones FFTW makes without it, so results do not depend on it.
@Suite struct FFTWisdomTests {
    /// Wisdom made by an FFTW configured as this one (same version, same instruction sets found
    /// on the processor) loads. Elsewhere FFTW plans as usual, and the test says so: record the
    /// wisdom again with `tactus-bench wisdom --write Sources/TactusDSP/FFTWisdom+Recorded.swift`
    /// on the machines Tactus runs on.
    @Test(.enabled(
        if: FFTWisdom.recordingFitsThisFFTW,
        "the recorded FFTW wisdom was made by another FFTW version or for other instruction sets"))
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
