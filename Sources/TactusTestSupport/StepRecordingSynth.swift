import Foundation

/// Synthesised accelerometer recordings of a person walking or running, with a known cadence:
/// step impulses (heel strike, rebound, push-off: several harmonics) and the body's bounce on the
/// vertical, left and right steps of different strength, arm swing at half the step rate, timing
/// jitter, gravity, a random orientation of the phone, sensor noise, irregular sample times.
public struct StepRecordingSynth: Sendable {
    /// A stretch of the recording: its length and the cadence from its start to its end (a ramp
    /// when they differ); a cadence of 0 stands still.
    public struct Stretch: Sendable {
        public var seconds: Double
        public var from: Double
        public var to: Double

        public init(seconds: Double, from: Double, to: Double? = nil) {
            self.seconds = seconds
            self.from = from
            self.to = to ?? from
        }
    }

    public var stretches: [Stretch]
    /// Nominal samples per second.
    public var rate: Double = 100
    /// Each sample's time moves by up to this fraction of the interval (uniformly); the order stays.
    public var timeJitter: Double = 0
    /// The standard deviation of each step interval, as a fraction of it.
    public var stepJitter: Double = 0.02
    /// The heel strike's peak, in g.
    public var impulse: Double = 1.2
    /// The body's vertical bounce at the step rate, in g.
    public var bounce: Double = 0.3
    /// Left steps are this fraction stronger, right ones weaker.
    public var asymmetry: Double = 0.15
    /// Arm swing at half the step rate, in g, mostly horizontal.
    public var armSwing: Double = 0.3
    /// Sensor noise per axis (standard deviation), in g.
    public var noise: Double = 0.02
    public var includesGravity = true
    /// The phone turns about a random axis at this rate, in radians per second (0: a fixed orientation).
    public var turnRate: Double = 0
    /// Multiply values in g by this: 1 for g, 9.80665 for m/s^2.
    public var unitScale: Double = 9.80665
    public var seed: UInt64 = 1

    public init(stretches: [Stretch]) {
        self.stretches = stretches
    }

    /// A recording with samples and the times of its steps.
    public struct Recording: Sendable {
        public var times: [Double]
        public var x: [Double]
        public var y: [Double]
        public var z: [Double]
        /// When each step's heel strikes, in seconds.
        public var steps: [Double]

        /// The cadence of the steps between `start` and `end`, in steps per minute: intervals
        /// between the steps inside, over their span; nil with fewer than 3 steps or a pause inside.
        public func cadence(from start: Double, to end: Double) -> Double? {
            let inside = steps.filter { $0 >= start && $0 < end }
            guard inside.count >= 3, let first = inside.first, let last = inside.last else { return nil }
            let meanInterval = (last - first) / Double(inside.count - 1)
            // A stretch standing still inside the window (or at its ends): no single cadence.
            guard first - start < 2 * meanInterval, end - last < 2 * meanInterval,
                zip(inside.dropFirst(), inside).allSatisfy({ $0 - $1 < 2 * meanInterval })
            else { return nil }
            return 60 / meanInterval
        }
    }

    public var duration: Double { stretches.reduce(0) { $0 + $1.seconds } }

    /// The cadence intended at `time` (0 standing still).
    public func intendedCadence(at time: Double) -> Double {
        var start = 0.0
        for stretch in stretches {
            if time < start + stretch.seconds {
                return stretch.from + (stretch.to - stretch.from) * (time - start) / stretch.seconds
            }
            start += stretch.seconds
        }
        return stretches.last.map { $0.to } ?? 0
    }

    public func render() -> Recording {
        var random = SeededGenerator(seed: seed)
        func gaussian() -> Double {
            let u1 = max(Double(random.next() >> 11) / Double(1 << 53), 1e-12), u2 = Double(random.next() >> 11) / Double(1 << 53)
            return (-2 * log(u1)).squareRoot() * cos(2 * .pi * u2)
        }
        // Steps: each interval from the cadence at its start, with jitter; the step phase for bounce and arms.
        var steps: [Double] = []
        var time = 0.0
        while time < duration {
            let cadence = intendedCadence(at: time)
            if cadence <= 0 {
                time += 0.05
                continue
            }
            steps.append(time)
            time += 60 / cadence * (1 + stepJitter * gaussian())
        }
        let count = Int(duration * rate)
        var times = (0..<count).map { Double($0) / rate }
        if timeJitter > 0 {
            for index in times.indices {
                times[index] += timeJitter / rate * (Double(random.nextSigned()) * 0.5)
            }
        }
        // World frame: vertical (index 2) and forward (index 0).
        var world = [[Double]](repeating: [Double](repeating: 0, count: count), count: 3)
        for (number, step) in steps.enumerated() {
            let strength = impulse * (number % 2 == 0 ? 1 + asymmetry : 1 - asymmetry)
            // The last step before a pause lasts as long as the cadence says.
            let nominal = 60 / intendedCadence(at: step)
            let next = number + 1 < steps.count ? min(steps[number + 1], step + 1.5 * nominal) : step + nominal
            let interval = next - step
            let first = max(0, Int((step - 0.1) * rate)), last = min(count - 1, Int(max(next, step + 0.35) * rate))
            guard first <= last else { continue }
            for index in first...last {
                let t = times[index] - step
                guard t > -0.1 else { continue }
                let pulse = strength * (exp(-pow(t / 0.025, 2)) - 0.45 * exp(-pow((t - 0.07) / 0.04, 2))
                    + 0.25 * exp(-pow((t - 0.2) / 0.05, 2)))
                if t < interval {
                    // Within this step: bounce at the step rate, arm swing at half of it.
                    let phase = t / interval
                    world[2][index] += bounce * cos(2 * .pi * phase)
                    let armPhase = Double.pi * (Double(number) + phase)
                    world[0][index] += armSwing * sin(armPhase)
                    world[2][index] += 0.2 * armSwing * sin(armPhase)
                }
                world[2][index] += pulse
            }
        }
        if includesGravity {
            for index in 0..<count { world[2][index] += 1 }
        }
        let rotation = Self.randomRotation(&random)
        let axis = rotation[0]  // a random unit vector
        var device = [[Double]](repeating: [Double](repeating: 0, count: count), count: 3)
        for index in 0..<count {
            // Turned by Rodrigues' formula about `axis`, then by the fixed rotation.
            let vector = (0..<3).map { world[$0][index] }
            let angle = turnRate * times[index]
            let (cosine, sine) = (cos(angle), sin(angle))
            let along = zip(axis, vector).reduce(0) { $0 + $1.0 * $1.1 }
            let cross = [axis[1] * vector[2] - axis[2] * vector[1], axis[2] * vector[0] - axis[0] * vector[2],
                         axis[0] * vector[1] - axis[1] * vector[0]]
            let turned = (0..<3).map { vector[$0] * cosine + cross[$0] * sine + axis[$0] * along * (1 - cosine) }
            for row in 0..<3 {
                var value = noise * gaussian()
                for column in 0..<3 { value += rotation[row][column] * turned[column] }
                device[row][index] = value * unitScale
            }
        }
        return Recording(times: times, x: device[0], y: device[1], z: device[2], steps: steps)
    }

    /// A uniformly random rotation (from a random unit quaternion).
    static func randomRotation(_ random: inout SeededGenerator) -> [[Double]] {
        var q = (0..<4).map { _ in Double(random.nextSigned()) }
        let norm = q.reduce(0) { $0 + $1 * $1 }.squareRoot()
        q = q.map { $0 / max(norm, 1e-9) }
        let (w, x, y, z) = (q[0], q[1], q[2], q[3])
        return [
            [1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
            [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
            [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)],
        ]
    }
}

extension StepRecordingSynth.Recording {
    /// The CSV layouts of phone logger apps, as the tests write them.
    public enum CSVLayout: Sendable, CaseIterable {
        /// `t,x,y,z`, seconds.
        case plain
        /// Sensor Logger: `time,seconds_elapsed,z,y,x`, `time` in nanoseconds since the epoch.
        case sensorLogger
        /// phyphox "Acceleration with g": quoted header, `"Time (s)","Acceleration x (m/s^2)",...`.
        case phyphox
        /// phyphox exported with semicolons and decimal commas.
        case phyphoxDecimalComma
        /// Physics Toolbox g-force meter on Android: `time,gFx,gFy,gFz,TgF`, time in seconds.
        case physicsToolbox
        /// Physics Toolbox on iOS: `time,gFx,gFy,gFz,gFTotal`, time as a date and clock time.
        case physicsToolboxClock
    }

    /// The recording as `layout` writes it (values in the recording's own unit).
    public func csv(_ layout: CSVLayout) -> String {
        var lines: [String] = []
        lines.reserveCapacity(times.count + 1)
        func number(_ value: Double) -> String { String(format: "%.6f", value) }
        switch layout {
        case .plain:
            lines.append("t,x,y,z")
            for index in times.indices {
                lines.append("\(number(times[index])),\(number(x[index])),\(number(y[index])),\(number(z[index]))")
            }
        case .sensorLogger:
            lines.append("time,seconds_elapsed,z,y,x")
            for index in times.indices {
                let nanoseconds = 1_700_000_000_000_000_000 + Int64((times[index] * 1e9).rounded())
                lines.append("\(nanoseconds),\(number(times[index])),\(number(z[index])),\(number(y[index])),\(number(x[index]))")
            }
        case .phyphox:
            lines.append(#""Time (s)","Acceleration x (m/s^2)","Acceleration y (m/s^2)","Acceleration z (m/s^2)""#)
            for index in times.indices {
                lines.append(String(format: "%.9E,%.9E,%.9E,%.9E", times[index], x[index], y[index], z[index]))
            }
        case .phyphoxDecimalComma:
            lines.append(#""Time (s)";"Acceleration x (m/s^2)";"Acceleration y (m/s^2)";"Acceleration z (m/s^2)""#)
            for index in times.indices {
                let fields = [times[index], x[index], y[index], z[index]].map { number($0).replacingOccurrences(of: ".", with: ",") }
                lines.append(fields.joined(separator: ";"))
            }
        case .physicsToolbox:
            lines.append("time,gFx,gFy,gFz,TgF")
            for index in times.indices {
                let total = (x[index] * x[index] + y[index] * y[index] + z[index] * z[index]).squareRoot()
                lines.append("\(number(times[index])),\(number(x[index])),\(number(y[index])),\(number(z[index])),\(number(total))")
            }
        case .physicsToolboxClock:
            lines.append("time,gFx,gFy,gFz,gFTotal")
            for index in times.indices {
                let clock = 17 * 3600 + 23 * 60 + times[index]
                let stamp = String(format: "2018-10-03 %02d:%02d:%07.4f", Int(clock) / 3600, Int(clock) % 3600 / 60,
                    clock.truncatingRemainder(dividingBy: 60))
                let total = (x[index] * x[index] + y[index] * y[index] + z[index] * z[index]).squareRoot()
                lines.append("\(stamp),\(number(x[index])),\(number(y[index])),\(number(z[index])),\(number(total))")
            }
        }
        return lines.joined(separator: "\n") + "\n"
    }
}
