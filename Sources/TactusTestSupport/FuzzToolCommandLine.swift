import Foundation

/// The command line of a fuzz target built without libFuzzer: `NAME seeds DIR` writes the seed
/// corpus, `NAME PATH...` replays files (or every file of a directory) through the target,
/// printing what `replay` says of each. Usage errors exit 2, missing files and I/O errors 1.
public enum FuzzToolCommandLine {
    public static func run(
        name: String, usage: String, arguments: [String],
        seeds: () throws -> [(name: String, bytes: [UInt8])], replay: ([UInt8]) -> String
    ) -> Never {
        if arguments.first == "seeds", arguments.count == 2 {
            do {
                try FileManager.default.createDirectory(atPath: arguments[1], withIntermediateDirectories: true)
                for seed in try seeds() {
                    try Data(seed.bytes).write(to: URL(fileURLWithPath: "\(arguments[1])/\(seed.name)"))
                }
            } catch {
                fail("\(name): \(error)")
            }
            exit(0)
        }
        if arguments.isEmpty || arguments.contains(where: { $0.hasPrefix("-") }) {
            print(usage)
            exit(arguments.isEmpty ? 2 : 0)
        }
        for path in arguments {
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
                fail("\(name): \(path): no such file")
            }
            let files = isDirectory.boolValue
                ? ((try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []).sorted().map { "\(path)/\($0)" } : [path]
            for file in files {
                guard let bytes = FileManager.default.contents(atPath: file) else { continue }
                print("\(file): \(bytes.count) bytes\(replay([UInt8](bytes)))")
            }
        }
        exit(0)
    }

    private static func fail(_ message: String) -> Never {
        FileHandle.standardError.write(Data((message + "\n").utf8))
        exit(1)
    }
}
