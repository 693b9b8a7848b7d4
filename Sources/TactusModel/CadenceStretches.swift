import Foundation

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
        // The shortest stretch under the minimum gives its time to its closer neighbour, until none is left.
        while groups.count > 1, let shortest = groups.indices.filter({ groups[$0].duration < minimumSeconds })
            .min(by: { groups[$0].duration < groups[$1].duration })
        {
            let neighbour: Int
            if shortest == 0 {
                neighbour = 1
            } else if shortest == groups.count - 1 {
                neighbour = shortest - 1
            } else {
                let cadence = groups[shortest].cadence
                neighbour = abs(groups[shortest - 1].cadence - cadence) <= abs(groups[shortest + 1].cadence - cadence)
                    ? shortest - 1 : shortest + 1
            }
            groups[neighbour].duration += groups[shortest].duration
            groups.remove(at: shortest)
        }
        var index = 1
        while index < groups.count {
            if abs(groups[index].cadence - groups[index - 1].cadence) <= tolerance * groups[index - 1].cadence {
                groups[index - 1].merge(groups[index])
                groups.remove(at: index)
            } else {
                index += 1
            }
        }
        var start = 0.0
        return groups.map { group in
            defer { start += group.duration }
            return CadenceStretch(start: start, duration: group.duration, cadence: group.cadence)
        }
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
