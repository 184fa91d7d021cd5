import Synchronization

/// A value that several threads share, reached only under its lock: the one place in the package
/// where a lock and the state it guards are tied together by the type, so a class whose shared
/// state lives in a `Locked` (and whose other fields are `let`s of Sendable types) is plain
/// `Sendable`, checked by the compiler — as `Locked` itself is: it keeps the value in a
/// `Synchronization.Mutex` (stored inline, no lock object of its own).
public final class Locked<Value: Sendable>: Sendable {
    private let mutex: Mutex<Value>

    public init(_ value: Value) { mutex = Mutex(value) }

    /// Runs `body` with the value, under the lock (keep it short: no I/O, no waiting).
    public func withLock<R>(_ body: (inout Value) throws -> R) rethrows -> R {
        try mutex.withLock { (value: inout sending Value) throws -> R in try body(&value) }
    }

    /// A copy of the value now.
    public var current: Value { mutex.withLock { $0 } }
}
