import Foundation

/// A name as a directory lists it: bytes, which Tactus can use only as UTF-8 text (paths are
/// strings everywhere: on the wire, in the library, in every open). A name that is not UTF-8
/// (`bad\xFF\xFE.flac`, written by another system) is reported under ``shown(_:)`` with
/// ``notUTF8``, never looked up under a lossy spelling that names no file.
public enum FileName {
    /// Why a file or folder whose name is not UTF-8 is left out.
    public static let notUTF8 = "its name is not valid UTF-8, and tactus reads files by UTF-8 paths (rename it)"

    /// `bytes` as text when they are valid UTF-8, else nil.
    public static func decoded(_ bytes: some Collection<UInt8>) -> String? {
        String(validating: bytes, as: UTF8.self)
    }

    /// `bytes` for a person when they are not UTF-8: printable ASCII as it is, every other byte
    /// as `\xNN`.
    public static func shown(_ bytes: some Collection<UInt8>) -> String {
        bytes.map { (0x20..<0x7F).contains($0) ? String(UnicodeScalar($0)) : String(format: "\\x%02X", $0) }.joined()
    }

    /// The name of a directory entry `readdir` returned: its bytes up to the NUL.
    public static func bytes(of entry: UnsafeMutablePointer<dirent>) -> [UInt8] {
        withUnsafeBytes(of: entry.pointee.d_name) { Array($0.prefix(while: { $0 != 0 })) }
    }
}
