import Dispatch
import Foundation

/// A value that test code waits on: every ``update(_:)`` wakes the waiters, which look at their
/// condition again. Waiting costs nothing while nothing changes: no polling, no sleep; the
/// timeout is a deadline only, for a test that would otherwise hang.
public final class Watched<Value: Sendable>: @unchecked Sendable {
    private let condition = NSCondition()
    private var current: Value
    private var waiters: [UInt64: CheckedContinuation<Bool?, Never>] = [:]
    private var nextWaiter: UInt64 = 0

    public init(_ value: Value) { current = value }

    public var value: Value {
        condition.lock()
        defer { condition.unlock() }
        return current
    }

    /// Changes the value and wakes every waiter.
    @discardableResult
    public func update<R>(_ body: (inout Value) throws -> R) rethrows -> R {
        condition.lock()
        let result: R
        do { result = try body(&current) } catch {
            condition.unlock()
            throw error
        }
        let woken = waiters
        waiters = [:]
        condition.broadcast()
        condition.unlock()
        for continuation in woken.values { continuation.resume(returning: nil) }
        return result
    }

    public func set(_ value: Value) { update { $0 = value } }

    /// Suspends until `predicate` holds for the value (true) or `timeout` seconds pass (false).
    public func wait(timeout: Double, until predicate: (Value) -> Bool) async -> Bool {
        let deadline = DispatchTime.now() + timeout
        while true {
            let outcome: Bool? = await withCheckedContinuation { continuation in
                condition.lock()
                if predicate(current) {
                    condition.unlock()
                    continuation.resume(returning: true)
                    return
                }
                if DispatchTime.now() >= deadline {
                    condition.unlock()
                    continuation.resume(returning: false)
                    return
                }
                let id = nextWaiter
                nextWaiter += 1
                waiters[id] = continuation
                condition.unlock()
                DispatchQueue.global().asyncAfter(deadline: deadline) { [weak self] in self?.expire(id) }
            }
            if let outcome { return outcome }
        }
    }

    /// ``wait(timeout:until:)`` for code that may block its thread (a child process's helpers).
    public func waitBlocking(timeout: Double, until predicate: (Value) -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        condition.lock()
        defer { condition.unlock() }
        while !predicate(current) {
            if !condition.wait(until: deadline) { return predicate(current) }
        }
        return true
    }

    private func expire(_ id: UInt64) {
        condition.lock()
        let continuation = waiters.removeValue(forKey: id)
        condition.unlock()
        continuation?.resume(returning: nil)
    }
}

/// A one-shot event (a child's exit, a READY line): set once, waited on by many.
public final class Latch: @unchecked Sendable {
    private let state = Watched(false)
    public init() {}
    public func open() { state.set(true) }
    public var isOpen: Bool { state.value }
    public func wait(timeout: Double) async -> Bool { await state.wait(timeout: timeout) { $0 } }
    public func waitBlocking(timeout: Double) -> Bool { state.waitBlocking(timeout: timeout) { $0 } }
}
