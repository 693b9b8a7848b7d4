import Foundation
#if TACTUS_LIBFUZZER
import CLibFuzzer
#endif

// The fuzz target. `make fuzz` builds it with `-sanitize=fuzzer,address -D TACTUS_LIBFUZZER`:
// the entry function then hands each input libFuzzer makes to `fuzz`. Built normally, the
// target is a tool that writes the seed corpus and replays inputs (a corpus, a saved crash).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    WorkoutFuzzer.run(Array(UnsafeBufferPointer(start: data, count: size)))
    return 0
}

#if TACTUS_LIBFUZZER
/// The executable's entry point (SwiftPM links `main` to it): libFuzzer's driver.
@_cdecl("tactus_fuzz_workout_main")
func fuzzerMain(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32 {
    var argc = argc
    var argv = argv
    return LLVMFuzzerRunDriver(&argc, &argv, fuzz)
}
#endif

#if !TACTUS_LIBFUZZER
import TactusTestSupport

/// The normal build's entry point: writes the seed corpus or replays inputs.
@main
enum WorkoutFuzzTool {
    static let usage = """
        usage: tactus-fuzz-workout seeds DIR     write the seed corpus (FIT, GPX and TCX workouts) into DIR
               tactus-fuzz-workout PATH...       run each file (or each file of a directory) through the workout readers
        """

    static func main() {
        FuzzToolCommandLine.run(
            name: "tactus-fuzz-workout", usage: usage, arguments: Array(CommandLine.arguments.dropFirst()),
            seeds: { WorkoutFuzzer.seeds() },
            replay: { ": \(WorkoutFuzzer.run($0))" })
    }
}
#endif
