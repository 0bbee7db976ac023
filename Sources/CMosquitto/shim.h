// libmosquitto (the Eclipse Mosquitto client library) for Swift: the client API and the
// MQTT v5 property and reason-code constants.
#include <mosquitto.h>
#include <mqtt_protocol.h>
