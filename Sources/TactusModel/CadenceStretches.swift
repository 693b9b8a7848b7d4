import Foundation
import HeapModule

/// A stretch of a recording at a steady cadence.
public struct CadenceStretch: Sendable, Hashable, Codable {
    /// Seconds from the recording's first sample.
    public var start: Double
    public var duration: Double
    /// Steps per minute: the mean of the stretch's windows with steps.
    public var cadence: Double

    public init(start: Double, duration: Double, cadence: Double) {
        self.start = start
        self.duration = duration
        self.cadence = cadence
    }

    enum CodingKeys: String, CodingKey {
        case start = "start_s", duration = "duration_s", cadence = "cadence_spm"
    }
}

extension [CadenceStretch] {
    /// The stretches as a playlist profile: `118s@160.1,120s@179.9`.
    public func profile() -> String {
        map { "\(Swift.max(1, Int($0.duration.rounded())))s@" + String(format: "%.1f", $0.cadence) }.joined(separator: ",")
    }
}

extension CadenceReport {
    /// The recording cut into stretches of steady cadence, covering it from start to end.
    ///
    /// Each window stands for the time around its middle (half a hop either side). Consecutive
    /// windows with steps stay in one stretch while their cadence is within `tolerance` (a
    /// fraction) of the stretch's mean so far; a window further away starts the next stretch.
    /// Windows without steps (standing still, no period) belong to the stretch around them. Then
    /// each stretch shorter than `minimumSeconds` (a burst too short to follow) gives its time to
    /// the neighbour of closer cadence, which keeps its cadence; and neighbours within `tolerance`
    /// of each other join. A ramp becomes a few steps, not one per window.
    /// Empty when no window has steps.
    public func steadyStretches(tolerance: Double = 0.03, minimumSeconds: Double = 60) -> [CadenceStretch] {
        guard !windows.isEmpty, windows.contains(where: { $0.cadence != nil }) else { return [] }
        let middles = windows.map { ($0.start + $0.end) / 2 }
        var bounds = [0.0]
        for index in 1..<middles.count { bounds.append((middles[index - 1] + middles[index]) / 2) }
        bounds.append(max(duration, bounds[bounds.count - 1]))
        var groups: [Group] = []
        var pending = 0.0  // time of windows without steps before the first stretch
        for (index, window) in windows.enumerated() {
            let share = bounds[index + 1] - bounds[index]
            guard let cadence = window.cadence else {
                if groups.isEmpty { pending += share } else { groups[groups.count - 1].duration += share }
                continue
            }
            if let last = groups.last, abs(cadence - last.cadence) <= tolerance * last.cadence {
                groups[groups.count - 1].add(cadence: cadence, seconds: share)
            } else {
                groups.append(Group(duration: 0, stepSeconds: 0, cadenceSeconds: 0))
                groups[groups.count - 1].add(cadence: cadence, seconds: share)
            }
        }
        groups[0].duration += pending
        groups = Self.absorbingShortStretches(groups, minimumSeconds: minimumSeconds)
        // Neighbours within the tolerance of each other join.
        var joined: [Group] = []
        for group in groups {
            if let last = joined.last, abs(group.cadence - last.cadence) <= tolerance * last.cadence {
                joined[joined.count - 1].merge(group)
            } else {
                joined.append(group)
            }
        }
        groups = joined
        var start = 0.0
        return groups.map { group in
            defer { start += group.duration }
            return CadenceStretch(start: start, duration: group.duration, cadence: group.cadence)
        }
    }
}

extension CadenceReport {
    /// `groups` after the shortest stretch under `minimumSeconds` has given its time to its
    /// neighbour of closer cadence (the one before on a tie; the only one at an end), again and
    /// again until none is left or one stretch remains; the shortest first, the earliest of
    /// equals first. The stretches are a list linked both ways and the short ones a heap, so a
    /// recording whose cadence changes at every window costs n log n, not n² (a 16-hour
    /// zig-zag took 1.85 s of the web gateway: attack round 8, L3).
    fileprivate static func absorbingShortStretches(_ groups: [Group], minimumSeconds: Double) -> [Group] {
        var groups = groups
        let count = groups.count
        var previous = Array(-1..<(count - 1)), next = Array(1...count)  // -1 and `count`: none
        var removed = [Bool](repeating: false, count: count)
        var alive = count
        var short = Heap(groups.indices.filter { groups[$0].duration < minimumSeconds }.map { ShortStretch(duration: groups[$0].duration, index: $0) })
        while alive > 1, let entry = short.popMin() {
            let shortest = entry.index
            // An entry made stale by a stretch that gained time since, or is gone.
            guard !removed[shortest], groups[shortest].duration == entry.duration else { continue }
            let before = previous[shortest], after = next[shortest]
            let neighbour: Int
            if before < 0 {
                neighbour = after
            } else if after == count {
                neighbour = before
            } else {
                let cadence = groups[shortest].cadence
                neighbour = abs(groups[before].cadence - cadence) <= abs(groups[after].cadence - cadence) ? before : after
            }
            groups[neighbour].duration += groups[shortest].duration
            removed[shortest] = true
            alive -= 1
            if before >= 0 { next[before] = after }
            if after < count { previous[after] = before }
            if groups[neighbour].duration < minimumSeconds {
                short.insert(ShortStretch(duration: groups[neighbour].duration, index: neighbour))
            }
        }
        return groups.indices.filter { !removed[$0] }.map { groups[$0] }
    }
}

/// A stretch shorter than the minimum, by its length then its place.
private struct ShortStretch: Comparable {
    var duration: Double
    var index: Int

    static func < (a: ShortStretch, b: ShortStretch) -> Bool {
        (a.duration, a.index) < (b.duration, b.index)
    }
}

/// A stretch being built: its length, and its windows with steps weighted by their time.
private struct Group {
    var duration: Double
    var stepSeconds: Double
    var cadenceSeconds: Double

    var cadence: Double { cadenceSeconds / stepSeconds }

    mutating func add(cadence: Double, seconds: Double) {
        duration += seconds
        stepSeconds += seconds
        cadenceSeconds += cadence * seconds
    }

    mutating func merge(_ other: Group) {
        duration += other.duration
        stepSeconds += other.stepSeconds
        cadenceSeconds += other.cadenceSeconds
    }
}
