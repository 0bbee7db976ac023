import BluetoothWire
import GAP
import HCI

extension BLEHost {
    /// Scans for `duration` and returns one ``Advertisement`` per device (advertisement and scan
    /// response merged, the last RSSI kept), sorted by address. With `serviceUUID` or
    /// `addresses`, a device is kept when it matches either; with neither, all are kept.
    public func scan(for duration: Duration, serviceUUID: BluetoothUUID? = nil,
                     addresses: Set<BluetoothAddress> = []) async throws -> [Advertisement] {
        try checkReady()
        await acquireInitiator()
        defer { releaseInitiator() }
        try checkReady()
        let interval = UInt16(max(4, min(0x4000, (configuration.scanIntervalMs / 0.625).rounded())))
        let window = UInt16(max(4, min(Double(interval), (configuration.scanWindowMs / 0.625).rounded())))
        _ = try await execute(LESetScanParametersCommand(leScanType: configuration.activeScan ? 1 : 0,
                                                         leScanInterval: interval, leScanWindow: window,
                                                         ownAddressType: configuration.ownAddressType))
        scanResults = [:]
        do {
            _ = try await execute(LESetScanEnableCommand(leScanEnable: true, filterDuplicates: true))
        } catch {
            scanResults = nil
            throw error
        }
        let sleepError: (any Error)?
        do {
            try await transport.loop.sleep(for: duration.seconds)
            sleepError = nil
        } catch {
            sleepError = error
        }
        let found = scanResults ?? [:]
        scanResults = nil
        _ = try? await execute(LESetScanEnableCommand(leScanEnable: false, filterDuplicates: false))
        if sleepError != nil { throw BLEHostError.cancelled }
        return found.values.filter { advertisement in
            if serviceUUID == nil, addresses.isEmpty { return true }
            if let serviceUUID, advertisement.serviceUUIDs.contains(serviceUUID) { return true }
            return addresses.contains(advertisement.address)
        }.sorted { $0.address < $1.address }
    }

    /// Merges one report into the scan results (ignored when not scanning).
    func collect(address: BluetoothAddress, addressType: BluetoothAddressType, data: [UInt8], rssi: Int8,
                 connectable: Bool, isScanResponse: Bool) {
        guard scanResults != nil else { return }
        let parsed = AdvertisingData(bytes: data)
        var entry = scanResults?[address] ?? Advertisement(address: address, addressType: addressType, rssi: rssi,
                                                           isConnectable: connectable)
        if !isScanResponse {
            entry.isConnectable = connectable
            entry.addressType = addressType
        }
        entry.rssi = rssi
        if let name = parsed.localName, entry.name == nil || parsed.completeLocalName != nil { entry.name = name }
        for uuid in parsed.serviceUUIDs where !entry.serviceUUIDs.contains(uuid) { entry.serviceUUIDs.append(uuid) }
        if let manufacturer = parsed.manufacturerData.first {
            entry.manufacturerData = [UInt8(manufacturer.companyIdentifier & 0xFF), UInt8(manufacturer.companyIdentifier >> 8)]
                + manufacturer.data
        }
        scanResults?[address] = entry
    }

    func checkReady() throws(BLEHostError) {
        guard state == .ready else { throw .notReady(state: state.rawValue) }
    }

    /// Scanning and initiating share the controller's scanner: one at a time, in arrival order.
    func acquireInitiator() async {
        if initiatorBusy {
            await withCheckedContinuation { initiatorQueue.append($0) }
        } else {
            initiatorBusy = true
        }
    }

    func releaseInitiator() {
        if initiatorQueue.isEmpty {
            initiatorBusy = false
        } else {
            initiatorQueue.removeFirst().resume()
        }
    }
}
