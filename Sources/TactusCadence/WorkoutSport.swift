import TactusModel

/// The sport of a watch's workout, as its file names it, and what its cadence counts then.
///
/// A watch records the cadence of the sport it was set to: strides (or steps) on foot, pedal
/// revolutions on a bike, strokes in a boat or a pool. Only the first is a runner's tempo.
enum WorkoutSport {
    /// The sports of the FIT profile (the `sport` type), by number.
    static let fitNames: [Int: String] = [
        0: "generic", 1: "running", 2: "cycling", 3: "transition", 4: "fitness_equipment", 5: "swimming", 6: "basketball",
        7: "soccer", 8: "tennis", 9: "american_football", 10: "training", 11: "walking", 12: "cross_country_skiing",
        13: "alpine_skiing", 14: "snowboarding", 15: "rowing", 16: "mountaineering", 17: "hiking", 18: "multisport",
        19: "paddling", 20: "flying", 21: "e_biking", 22: "motorcycling", 23: "boating", 24: "driving", 25: "golf",
        26: "hang_gliding", 27: "horseback_riding", 28: "hunting", 29: "fishing", 30: "inline_skating", 31: "rock_climbing",
        32: "sailing", 33: "ice_skating", 34: "sky_diving", 35: "snowshoeing", 36: "snowmobiling",
        37: "stand_up_paddleboarding", 38: "surfing", 39: "wakeboarding", 40: "water_skiing", 41: "kayaking", 42: "rafting",
        43: "windsurfing", 44: "kitesurfing", 45: "tactical", 46: "jumpmaster", 47: "boxing", 48: "floor_climbing",
        49: "baseball", 53: "diving", 56: "shooting", 58: "winter_sport", 59: "grinding", 62: "hiit", 63: "video_gaming",
        64: "racket", 65: "wheelchair_push_walk", 66: "wheelchair_push_run", 67: "meditation", 68: "para_sport",
        69: "disc_golf", 70: "team_sport", 71: "cricket", 72: "rugby", 73: "hockey", 74: "lacrosse", 75: "volleyball",
        76: "water_tubing", 77: "wakesurfing", 78: "water_sport", 79: "archery", 80: "mixed_martial_arts",
        81: "motor_sports", 82: "snorkeling", 83: "dance", 84: "jump_rope", 85: "pool_apnea", 86: "mobility",
        87: "geocaching",
    ]

    /// The name of FIT sport `number` (`sport 200` for one the profile does not name).
    static func fitName(_ number: Int) -> String {
        fitNames[number] ?? "sport \(number)"
    }

    /// A sport's name as a file writes it, as the report gives it: lower case, words joined by
    /// underscores, at most 40 letters and digits ("Biking" is `biking`, "Trail Run" `trail_run`);
    /// nil when nothing of it is left.
    static func normalised(_ text: String) -> String? {
        var name = ""
        for character in text.lowercased() where name.count < 40 {
            if character.isASCII, character.isLetter || character.isNumber {
                name.append(character)
            } else if character == " " || character == "-" || character == "_", !name.isEmpty, name.last != "_" {
                name.append("_")
            }
        }
        while name.last == "_" { name.removeLast() }
        return name.isEmpty ? nil : name
    }

    /// The sports of several sessions, tracks or activities as one: nil without any, the sport
    /// when they agree, `multisport` when they differ (a triathlon).
    static func combined(_ sports: [String]) -> String? {
        guard let first = sports.first else { return nil }
        return sports.allSatisfy { $0 == first } ? first : "multisport"
    }

    /// What the cadence of `sport` counts when it counts no steps; nil on foot (running,
    /// walking, hiking...) and when the file names no sport or a generic one: the cadence's own
    /// size then tells strides from steps.
    static func cadenceNotSteps(_ sport: String?) -> CadenceHeld? {
        guard let sport, !["generic", "other", "unknown", "all"].contains(sport), !sport.allSatisfy(\.isNumber) else { return nil }
        func mentions(_ words: [String]) -> Bool { words.contains { sport.contains($0) } }
        if mentions(["wheelchair"]) { return .other }
        if mentions(["run", "walk", "hik", "jog", "mountaineer", "snowshoe", "trek", "treadmill", "orienteer"]) { return nil }
        if mentions(["cycl", "bik", "ride", "spin"]) { return .revolutions }
        if mentions(["row", "paddl", "kayak", "canoe", "swim", "raft"]) { return .strokes }
        return .other
    }
}
