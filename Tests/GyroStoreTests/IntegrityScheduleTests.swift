import Foundation
@testable import GyroStore
import TestSupport
import XCTest

/// The full check runs at a boot's first start and once a day, not at every restart: a pass is
/// remembered in the store file with the boot it ran in (docs/durability.md, "Corruption").
final class IntegrityScheduleTests: XCTestCase {
    let hour = 3600.0 * 1000

    func testACheckIsDueUnlessThisBootPassedOneWithinTheInterval() {
        let now = 1_800_000_000_000.0
        let passed = IntegrityVerification(atMs: now - hour, seconds: 30, boot: 7)
        XCTAssertEqual(IntegritySchedule.delayMs(after: nil, boot: 7, nowMs: now), 0, "never checked")
        XCTAssertEqual(IntegritySchedule.delayMs(after: passed, boot: 8, nowMs: now), 0, "a new boot: a power cut may have lost writes")
        XCTAssertEqual(IntegritySchedule.delayMs(after: passed, boot: nil, nowMs: now), 0, "a boot that cannot be told")
        XCTAssertEqual(IntegritySchedule.delayMs(after: IntegrityVerification(atMs: now - hour, seconds: 30, boot: nil), boot: 7, nowMs: now), 0)
        XCTAssertEqual(IntegritySchedule.delayMs(after: passed, boot: 7, nowMs: now), 23 * hour, "a restart waits out the day")
        XCTAssertEqual(IntegritySchedule.delayMs(after: passed, boot: 7, nowMs: now + 23 * hour), 0, "a day after the last one")
        XCTAssertEqual(IntegritySchedule.delayMs(after: passed, boot: 7, nowMs: now - 30 * hour), 0, "a clock far behind the check")
        XCTAssertEqual(IntegritySchedule.delayMs(after: passed, boot: 7, nowMs: now - 2 * hour), 24 * hour, "never more than the interval")
    }

    func testTheBootIsTheFirstSixtyFourBitsOfItsId() {
        XCTAssertEqual(IntegritySchedule.boot(fromText: "0123abcd-4567-89ef-0123-456789abcdef\n"), 0x0123_abcd_4567_89ef)
        XCTAssertEqual(IntegritySchedule.boot(fromText: "ffffffff-ffff-ffff-0000-000000000000"), -1)
        XCTAssertNil(IntegritySchedule.boot(fromText: "short"))
        #if os(Linux)
        XCTAssertNotNil(IntegritySchedule.currentBoot())
        XCTAssertEqual(IntegritySchedule.currentBoot(), IntegritySchedule.currentBoot())
        #endif
    }

    /// A pass is written into the file it checked; a restart in the same boot reads it, says
    /// `verified` from it at once and does not read the file again.
    func testAPassIsRememberedAndARestartDoesNotCheckAgain() async throws {
        #if !os(Linux)
        throw XCTSkip("no boot id here")
        #else
        let folder = try TemporaryDirectory()
        let before = Date().timeIntervalSince1970 * 1000
        let first: IntegrityVerification
        do {
            let store = try GyroStore.open(directory: folder.path, logger: testLogger())
            let none = await store.lastVerification()
            XCTAssertNil(none, "a new store has not been checked")
            let checks = Task { await store.verifyIntegrityWhenDue() }
            defer { checks.cancel() }
            let found = try await untilVerified(store)
            let remembered = await store.lastVerification()
            first = try XCTUnwrap(remembered)
            XCTAssertEqual(first.boot, IntegritySchedule.currentBoot())
            XCTAssertGreaterThanOrEqual(first.atMs, before.rounded(.down))
            XCTAssertEqual(found, first.atMs, accuracy: 1)
        }

        let reopened = try GyroStore.open(directory: folder.path, logger: testLogger())
        XCTAssertEqual(reopened.integrity, .openChecked)
        let checks = Task { await reopened.verifyIntegrityWhenDue() }
        defer { checks.cancel() }
        let found = try await untilVerified(reopened)
        XCTAssertEqual(found, first.atMs, accuracy: 1, "the earlier pass, not a new check")
        let still = await reopened.lastVerification()
        XCTAssertEqual(still?.atMs, first.atMs)

        // Another boot's pass (a power cut since) is checked again.
        try await overwriteBoot(of: reopened, with: (IntegritySchedule.currentBoot() ?? 0) &+ 1)
        let third = try GyroStore.open(directory: folder.path, logger: testLogger())
        let again = Task { await third.verifyIntegrityWhenDue() }
        defer { again.cancel() }
        let checked = try await untilVerified(third)
        XCTAssertGreaterThan(checked, first.atMs, "a new check")
        let now = await third.lastVerification()
        XCTAssertEqual(now?.boot, IntegritySchedule.currentBoot())
        #endif
    }

    /// `atMs` of the `verified` state, waiting up to 10 s for it.
    func untilVerified(_ store: GyroStore) async throws -> Double {
        for _ in 0..<1000 {
            if case .verified(let atMs, _) = store.integrity { return atMs }
            // why: the store publishes its integrity state as a value with no change notification; a look every 10 ms.
            try await Task.sleep(for: .milliseconds(10))
        }
        XCTFail("not verified: \(store.integrity)")
        return 0
    }

    func overwriteBoot(of store: GyroStore, with boot: Int64) async throws {
        try await store.write { db in
            try db.run("UPDATE counter SET value = ? WHERE name = ?", [boot, IntegrityVerification.bootCounter])
        }
    }
}
