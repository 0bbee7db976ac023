import BluetoothWire

/// An LE Meta event (0x3E), Core v5.4, Vol 4, Part E, 7.7.65, decoded by subevent code.
/// Subevents this host does not model become ``unknown(subevent:parameters:)``.
public enum LEMetaEvent: Equatable, Sendable {
    case connectionComplete(LEConnectionCompleteEvent)
    case enhancedConnectionComplete(LEEnhancedConnectionCompleteEvent)
    case advertisingReport(LEAdvertisingReportEvent)
    case extendedAdvertisingReport(LEExtendedAdvertisingReportEvent)
    case connectionUpdateComplete(LEConnectionUpdateCompleteEvent)
    case remoteConnectionParameterRequest(LERemoteConnectionParameterRequestEvent)
    case unknown(subevent: LESubeventCode, parameters: [UInt8])

    /// Reads the subevent code and its parameters.
    public init(parameters reader: inout ByteReader) throws(WireError) {
        let subevent = LESubeventCode(rawValue: try reader.readUInt8())
        switch subevent {
        case .connectionComplete: self = .connectionComplete(try .init(parameters: &reader))
        case .enhancedConnectionComplete: self = .enhancedConnectionComplete(try .init(parameters: &reader))
        case .advertisingReport: self = .advertisingReport(try .init(parameters: &reader))
        case .extendedAdvertisingReport: self = .extendedAdvertisingReport(try .init(parameters: &reader))
        case .connectionUpdateComplete: self = .connectionUpdateComplete(try .init(parameters: &reader))
        case .remoteConnectionParameterRequest: self = .remoteConnectionParameterRequest(try .init(parameters: &reader))
        default: self = .unknown(subevent: subevent, parameters: reader.readRemainingBytes())
        }
    }

    public var subevent: LESubeventCode {
        switch self {
        case .connectionComplete: return .connectionComplete
        case .enhancedConnectionComplete: return .enhancedConnectionComplete
        case .advertisingReport: return .advertisingReport
        case .extendedAdvertisingReport: return .extendedAdvertisingReport
        case .connectionUpdateComplete: return .connectionUpdateComplete
        case .remoteConnectionParameterRequest: return .remoteConnectionParameterRequest
        case let .unknown(subevent, _): return subevent
        }
    }

    /// Writes the subevent code and its parameters.
    public func writeParameters(to writer: inout ByteWriter) {
        writer.writeUInt8(subevent.rawValue)
        switch self {
        case let .connectionComplete(event): event.writeParameters(to: &writer)
        case let .enhancedConnectionComplete(event): event.writeParameters(to: &writer)
        case let .advertisingReport(event): event.writeParameters(to: &writer)
        case let .extendedAdvertisingReport(event): event.writeParameters(to: &writer)
        case let .connectionUpdateComplete(event): event.writeParameters(to: &writer)
        case let .remoteConnectionParameterRequest(event): event.writeParameters(to: &writer)
        case let .unknown(_, parameters): writer.writeBytes(parameters)
        }
    }
}
