import Foundation

/// A value that several threads share, reached only under its lock: the one place in the package
/// where a lock and the state it guards are tied together by the type, so a class whose shared
/// state lives in a `Locked` (and whose other fields are `let`s of Sendable types) is plain
/// `Sendable`, checked by the compiler.
///
/// `@unchecked Sendable`: `value` is read and written only inside `withLock`, under `lock`; the
/// value is `Sendable`, so what `withLock` hands out may cross threads.
public final class Locked<Value: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Value

    public init(_ value: Value) { self.value = value }

    /// Runs `body` with the value, under the lock (keep it short: no I/O, no waiting).
    public func withLock<R>(_ body: (inout Value) throws -> R) rethrows -> R {
        try lock.withLock { try body(&value) }
    }

    /// A copy of the value now.
    public var current: Value { lock.withLock { value } }
}
