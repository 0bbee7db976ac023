// What entering an actor synchronously costs, per call, in each of the ways the data plane
// could (docs/benchmarks.md, "Entering the actors"). Not part of the package: build and count
// instructions and allocations with
//   swiftc -O -gnone -swift-version 6 actor_entry.swift -o /tmp/actor-entry
//   valgrind --tool=callgrind --callgrind-out-file=/dev/null /tmp/actor-entry MODE N
//   valgrind /tmp/actor-entry MODE N        (the heap summary)
// for N = 1000 and 3000; the difference over 2000 is one call. MODE: cast, outside, injob,
// injob-slot, turns.

/// A serial and task executor run by hand on the main thread, as a ThreadExecutor runs its queue.
final class HandRunExecutor: SerialExecutor, TaskExecutor, @unchecked Sendable {
    var jobs: [UnownedJob] = []
    func enqueue(_ job: consuming ExecutorJob) { jobs.append(UnownedJob(job)) }
    func asUnownedSerialExecutor() -> UnownedSerialExecutor { UnownedSerialExecutor(ordinary: self) }
    func asUnownedTaskExecutor() -> UnownedTaskExecutor { UnownedTaskExecutor(ordinary: self) }
    func isIsolatingCurrentContext() -> Bool? { true }
    func drain() {
        while !jobs.isEmpty {
            jobs.removeFirst().runSynchronously(isolatedTo: asUnownedSerialExecutor(), taskExecutor: asUnownedTaskExecutor())
        }
    }
}

let executor = HandRunExecutor()

actor Receiver {
    nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }
    var sum = 0
    func receive(_ value: Int) { sum &+= value }
}

/// A task that runs `body` once per resumption, inside a job of the executor.
final class Pump: @unchecked Sendable {
    var continuation: UnsafeContinuation<Void, Never>?
    var body: () -> Void = {}
    var slot = 0
    func turn() { continuation!.resume(); executor.drain() }
}

@inline(never) func value(_ index: Int) -> Int { index &* 7 }

let receiver = Receiver()
let pump = Pump()
let mode = CommandLine.arguments[1], count = Int(CommandLine.arguments[2])!
_ = Task(executorPreference: executor) {
    while true {
        await withUnsafeContinuation { pump.continuation = $0 }
        pump.body()
    }
}
executor.drain()
switch mode {
case "cast":  // what ThreadExecutor.entry(into:_:) does, made once
    let isolated: @Sendable (isolated Receiver, Int) -> Void = { $0.receive($1) }
    let call = unsafeBitCast(isolated, to: (@Sendable (Receiver, Int) -> Void).self)
    for index in 0..<count { call(receiver, value(index)) }
case "outside":  // assumeIsolated from a poll handler
    for index in 0..<count { let value = value(index); receiver.assumeIsolated { $0.receive(value) } }
case "injob":  // assumeIsolated inside a job of the receiver's executor
    pump.body = { for index in 0..<count { let value = value(index); receiver.assumeIsolated { $0.receive(value) } } }
    pump.turn()
case "injob-slot":  // the same, the closure capturing nothing
    pump.body = { for index in 0..<count { pump.slot = value(index); receiver.assumeIsolated { $0.receive(pump.slot) } } }
    pump.turn()
case "turns":  // a job per call: resume a waiting task, which enters
    pump.body = { let value = value(1); receiver.assumeIsolated { $0.receive(value) } }
    for _ in 0..<count { pump.turn() }
default:
    fatalError("unknown mode \(mode)")
}
print(receiver.assumeIsolated { $0.sum })
