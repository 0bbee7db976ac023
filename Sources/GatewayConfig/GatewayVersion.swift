/// The gateway's version, shown in the MQTT presence document and Home Assistant's device info.
public let gyrogateVersion = "0.1.0"
