import XCTest

@testable import MetaWear

final class MetaWearModelTests: XCTestCase {
    func testDetectionTable() {
        XCTAssertEqual(MetaWearModel.detect(modelNumber: "0", presentModules: []), .metaWearR)
        XCTAssertEqual(
            MetaWearModel.detect(modelNumber: "1", presentModules: [.barometer, .ambientLight]), .metaWearRPro)
        XCTAssertEqual(MetaWearModel.detect(modelNumber: "1", presentModules: [.barometer]), .metaWearRG)
        XCTAssertEqual(
            MetaWearModel.detect(modelNumber: "2", presentModules: [.magnetometer, .humidity]), .metaWearCPro)
        XCTAssertEqual(MetaWearModel.detect(modelNumber: "2", presentModules: [.humidity]), .metaEnvironment)
        XCTAssertEqual(MetaWearModel.detect(modelNumber: "2", presentModules: []), .metaWearC)
        XCTAssertEqual(MetaWearModel.detect(modelNumber: "3", presentModules: []), .metaHealth)
        XCTAssertEqual(MetaWearModel.detect(modelNumber: "4", presentModules: []), .metaTracker)
        XCTAssertEqual(MetaWearModel.detect(modelNumber: "5", presentModules: [.ambientLight]), .metaMotionR)
        XCTAssertEqual(MetaWearModel.detect(modelNumber: "5", presentModules: []), .metaMotionRL)
        XCTAssertEqual(MetaWearModel.detect(modelNumber: "6", presentModules: []), .metaMotionC)
        XCTAssertEqual(MetaWearModel.detect(modelNumber: "8", presentModules: []), .metaMotionS)
        XCTAssertEqual(MetaWearModel.detect(modelNumber: "7", presentModules: []), .unknown)
        XCTAssertEqual(MetaWearModel.detect(modelNumber: "", presentModules: []), .unknown)
        XCTAssertEqual(MetaWearModel.detect(modelNumber: nil, presentModules: []), .unknown)
    }

    func testFixtures() {
        XCTAssertEqual(Fixtures.board(Fixtures.metaMotionR, modelNumber: "5").model, .metaMotionR)
        // Without the ambient-light answer the same board reads as an RL.
        XCTAssertEqual(
            Fixtures.board(Fixtures.metaMotionR.filter { !$0.hasPrefix("14") }, modelNumber: "5").model, .metaMotionRL)
        XCTAssertEqual(Fixtures.board(Fixtures.metaMotionS, modelNumber: "8").model, .metaMotionS)
    }
}
