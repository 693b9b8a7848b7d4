import Foundation

/// `[########------]  12/40 songs, 1 failed, 3.2 songs/s, 9 s left` on standard error.
final class ProgressBar {
    /// The songs to follow.
    let total: Int
    private var drawn = false

    init(total: Int) {
        self.total = total
    }

    func draw(done: Int, failed: Int, elapsed: Duration) {
        guard total > 0 else { return }
        let width = 24
        let filled = min(width, done * width / total)
        let seconds = elapsed.seconds
        let rate = seconds > 0 ? Double(done) / seconds : 0
        var line = "[" + String(repeating: "#", count: filled) + String(repeating: "-", count: width - filled) + "]"
        line += "  \(done)/\(total) songs, \(failed) failed"
        if done > 0 && rate > 0 {
            line += String(format: ", %.1f songs/s, ", rate) + ServerText.duration(Double(total - done) / rate) + " left"
        }
        FileHandle.standardError.write(Data(("\r\u{1B}[K" + line).utf8))
        drawn = true
    }

    /// Erases the bar, so that a line printed next starts clean.
    func clear() {
        guard drawn else { return }
        FileHandle.standardError.write(Data("\r\u{1B}[K".utf8))
        drawn = false
    }
}
