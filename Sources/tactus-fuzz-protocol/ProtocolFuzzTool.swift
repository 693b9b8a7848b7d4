import Foundation
#if TACTUS_LIBFUZZER
import CLibFuzzer
#endif

// The fuzz target. `make fuzz` builds it with `-sanitize=fuzzer,address -D TACTUS_LIBFUZZER`:
// the entry function then hands each input libFuzzer makes to `fuzz`. Built normally, the
// target is a tool that writes the seed corpus and replays inputs (a corpus, a saved crash).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    ProtocolFuzzer.run(ProtocolFuzzer.frames(UnsafeRawBufferPointer(start: data, count: size)))
    return 0
}

#if TACTUS_LIBFUZZER
/// The executable's entry point (SwiftPM links `main` to it): libFuzzer's driver.
@_cdecl("tactus_fuzz_protocol_main")
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
enum ProtocolFuzzTool {
    static let usage = """
        usage: tactus-fuzz-protocol seeds DIR     write the seed corpus (valid messages) into DIR
               tactus-fuzz-protocol PATH...       run each file (or each file of a directory) through the decoders
        """

    static func main() {
        FuzzToolCommandLine.run(
            name: "tactus-fuzz-protocol", usage: usage, arguments: Array(CommandLine.arguments.dropFirst()),
            seeds: { try ProtocolSeeds.all().map { (name: $0.name, bytes: ProtocolFuzzer.input($0.frames)) } },
            replay: { bytes in
                let accepted = bytes.withUnsafeBytes { ProtocolFuzzer.run(ProtocolFuzzer.frames($0)) }
                return ", accepted by \(accepted) decoder(s)"
            })
    }
}
#endif
