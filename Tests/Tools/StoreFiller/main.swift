// Fills stores for the benchmarks, through the project's own store and capture code.
//
//   store-filler DIR MINUTES HZ [DEVICE]      one closed session through the capture engine
//                                             (the export's memory benchmark; OneSession.swift)
//   store-filler fill DIR --bytes SIZE …      months of sessions up to SIZE (FillOptions.swift)
//   store-filler retention DIR --limit SIZE   one timed retention pass (RetentionPass.swift)
//   store-filler gaps DIR DEVICE              the backfill's gap lookup, timed (GapLookup.swift)
import Glibc
import Logging

var logger = Logger(label: "store-filler")
logger.logLevel = .error
let arguments = Array(CommandLine.arguments.dropFirst())
do {
    switch arguments.first {
    case "fill": try await StoreFill.run(try FillOptions(Array(arguments.dropFirst())), logger: logger)
    case "retention": try await RetentionPass.run(Array(arguments.dropFirst()), logger: logger)
    case "gaps": try await GapLookup.run(Array(arguments.dropFirst()), logger: logger)
    default:
        try await OneSession.run(arguments, logger: logger)
    }
} catch let usage as Usage {
    print("usage: \(usage.text)")
    exit(64)
} catch {
    print("store-filler: \(error)")
    exit(1)
}
