#!/usr/bin/env python3
"""Writes the seed corpora under Tests/Fuzz/Corpus/<target>/ from the vectors of the unit tests
(Tests/BLEFuzzTests/Seeds.swift, Tests/HCITests, Tests/ATTTests, Tests/MetaWearTests,
Tests/GatewayConfigTests, Tests/AdminTests/HostileRequestTests.swift, config.json), in each
harness's input format (see the header of each Tests/Fuzz/Targets/*.swift). Re-run after
changing a format: python3 Tests/Fuzz/make-corpus.py"""
import json
import os
import shutil

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


def h(text):
    return bytes.fromhex(text.replace(" ", ""))


# Tests/BLEFuzzTests/Seeds.swift
EVENTS = [h(x) for x in [
    "0e 04 01 03 0c 00", "0e 07 01 02 20 00 1b 00 10", "0e 0b 01 05 10 00 fd 03 40 08 00 01 00",
    "0e 0a 01 09 10 00 f6 05 04 03 02 c1", "0e 06 01 20 20 00 40 00", "0f 04 00 01 0d 20", "05 04 00 40 00 13",
    "13 09 02 40 00 01 00 41 00 03 00", "3e 13 01 00 40 00 00 01 f6 05 04 03 02 c1 18 00 00 00 48 00 05",
    "3e 1f 0a 00 40 00 00 01 f6 05 04 03 02 c1 00 00 00 00 00 00 00 00 00 00 00 00 18 00 00 00 48 00 05",
    "3e 1d 02 02 00 01 f6 05 04 03 02 c1 03 02 01 06 c4 04 01 f6 05 04 03 02 c1 04 03 09 4d 57 b0",
    "3e 1d 0d 01 03 00 01 f6 05 04 03 02 c1 01 00 ff 7f c4 00 00 00 00 00 00 00 00 00 03 02 01 06",
    "3e 0a 03 00 40 00 06 00 00 00 f4 01", "3e 0b 06 40 00 06 00 0c 00 00 00 f4 01", "10 01 01",
]]
ACL = [h(x) for x in ["40 20 09 00 05 00 04 00 1b 12 00 aa bb", "40 10 03 00 01 02 03", "40 00 00 00"]]
L2CAP = [h(x) for x in [
    "07 00 04 00 1b 12 00 01 02 03 04", "0c 00 05 00 12 01 08 00 06 00 0c 00 00 00 f4 01",
    "06 00 05 00 13 01 02 00 00 00", "06 00 05 00 01 02 02 00 00 00",
]]
SIGNALS = [frame[4:] for frame in L2CAP[1:]]
ATT = [h(x) for x in [
    "01 08 04 00 0a", "02 f7 00", "03 17 00", "04 01 00 ff ff", "05 01 04 00 02 29 05 00 01 29",
    "05 02 0c 00 5a e7 ba fb 4c 46 dd d9 95 91 cb 85 00 90 6a 32", "08 01 00 ff ff 03 28",
    "09 07 02 00 02 03 00 00 2a 04 00 0a 05 00 01 2a", "10 01 00 ff ff 00 28",
    "11 06 01 00 05 00 00 18 06 00 09 00 01 18", "0a 03 00", "0b 4d 57", "0c 03 00 16 00", "0d 01 02",
    "12 0d 00 01 00", "13", "52 0f 00 13 01 01", "1b 12 00 03 04 01 02", "1d 12 00 ff", "1e",
    "16 0d 00 00 00 aa", "d2 0d 00", "08 01 00 ff ff 00 00 00 00 00 00 00 00 00 10 00 00 03 28 00 00",
]]
COMMANDS = [h(x) for x in ["03 0c 00", "0c 20 02 01 00", "01 0c 08 ff ff ff ff ff ff 00 20"]]

# Tests/MetaWearTests: MetaWearPacketParserTests.fixedLayoutPackets and TestSupport's boards.
FIXED_LAYOUT = [h(x) for x in [
    "13 05 3e 43 ff 7f 00 80", "13 07 09 15 ad 26 08 de 8a 1a 0d 26 65 e4 8d 20 ac 27 73 ec", "13 83 28 00",
    "03 04 16 c4 94 a2 2a d0", "03 83 28 03", "11 8c 63 34 10", "11 8b 01 07 7b 52 8f c9 e8", "01 01 01",
    "0b 84 15 04 00 00 05", "0b 85 9e 01 00 00", "0b 02 00", "09 02 00", "0a 02 00",
]]
META_MOTION_R = [h(x) for x in [
    "03 80 01 01", "13 80 00 01", "0b 80 00 02 08 80 2b 00 00", "11 80 00 03", "02 80 00 00", "14 80 00 00", "16 80",
]]
META_MOTION_S = [h(x) for x in [
    "03 80 04 00", "13 80 01 00", "0b 80 00 03 08 00 00 fb 03 00 02", "11 80 00 0a 07 00", "02 80 00 01 03 00",
]]


def write(target, name, data):
    folder = os.path.join(HERE, "Corpus", target)
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, name), "wb") as f:
        f.write(data)


def h4_seeds():
    write("h4", "events", b"\x00\x00" + b"".join(b"\x04" + e for e in EVENTS))
    write("h4", "acl", b"\x05\x00" + b"".join(b"\x02" + a for a in ACL))
    write("h4", "mixed-with-junk", b"\x11\x01" + b"\x04" + EVENTS[0] + b"\xff" + b"\x02" + ACL[0] + b"\x01" + COMMANDS[1]
          + b"\x00" + b"\x04" + EVENTS[8])
    write("h4", "commands", b"\x09\x00" + b"".join(b"\x01" + c for c in COMMANDS))
    # Fed 8 times: enough bytes for the framer to compact its buffer.
    write("h4", "compaction", b"\x2a\x07" + b"".join(b"\x04" + e for e in EVENTS) * 4)
    for i, event in enumerate(EVENTS):
        write("h4", "event-%02d" % i, b"\x00\x00\x04" + event)


def acl_seeds():
    # Whole-input decoders: a limit byte and a fragment size, then the packet.
    for i, packet in enumerate(ACL):
        write("acl", "acl-%d" % i, bytes([8, 27]) + packet)
    for i, frame in enumerate(L2CAP):
        write("acl", "l2cap-%d" % i, bytes([6, 4]) + frame)
    for i, signal in enumerate(SIGNALS):
        write("acl", "signal-%d" % i, bytes([6, 3]) + signal)

    # Fragment records: [flags][length][data]; flags bits 0-1 packet boundary, 2-3 handle.
    def record(boundary, handle, data, extra=0):
        return bytes([boundary | handle << 2 | extra, len(data)]) + data

    frame = L2CAP[0]
    write("acl", "fragments-att", bytes([6, 5]) + record(2, 0, frame[:5]) + record(1, 0, frame[5:]))
    two_handles = (record(2, 0, L2CAP[1][:3]) + record(2, 1, L2CAP[0][:6]) + record(1, 0, L2CAP[1][3:])
                   + record(1, 1, L2CAP[0][6:], extra=0x80))
    write("acl", "fragments-two-handles", bytes([8, 8]) + two_handles)
    write("acl", "fragments-interrupted", bytes([6, 2]) + record(2, 0, frame[:4]) + record(2, 0, L2CAP[2])
          + record(1, 0, b"\x01\x02") + record(0, 0, L2CAP[3], extra=0x40))
    write("acl", "fragments-too-long", bytes([1, 9]) + record(2, 2, b"\xff\x00\x04\x00" + b"\xaa" * 20)
          + record(1, 2, b"\xbb" * 30) + record(2, 2, L2CAP[3]))


def att_seeds():
    for i, pdu in enumerate(ATT):
        write("att", "pdu-%02d-%02x" % (i, pdu[0]), pdu)


def metawear_seeds():
    def record(operation, code, notification):
        return bytes([operation | code << 2, len(notification)]) + notification

    nominal = 16
    gyro160 = h("13 05 3e 43 ff 7f 00 80")
    packed160 = h("13 07 09 15 ad 26 08 de 8a 1a 0d 26 65 e4 8d 20 ac 27 73 ec")
    acc = h("03 04 16 c4 94 a2 2a d0")
    stream = b"".join(record(0, nominal, gyro160) for _ in range(12))
    # BMI160 maps on both modules (selector 2), 50 Hz, half-second confirmation window.
    write("metawear", "bmi160-stream", bytes([0x12, 0x01, 0x01, 0x01]) + stream)
    write("metawear", "bmi160-gap-and-jitter", bytes([0x12, 0x01, 0x01, 0x01]) + stream
          + record(0, 50, gyro160) + record(0, 12, gyro160) + record(0, 20, gyro160) + stream
          + record(0, 44, gyro160) + stream)
    write("metawear", "bmi160-packed-flush-restart", bytes([0x12, 0x0B, 0x01, 0x00])
          + b"".join(record(0, nominal, packed160) for _ in range(8)) + record(1, nominal, packed160)
          + record(2, 57, packed160) + b"".join(record(0, nominal, packed160) for _ in range(8)))
    write("metawear", "bmi160-accelerometer", bytes([0x12, 0x83, 0x01, 0x02]) + b"".join(record(0, nominal, acc) for _ in range(10)))
    bmi270_gyro = h("13 04 3e 43 ff 7f 00 80")
    bmi270_packed = h("13 05 09 15 ad 26 08 de 8a 1a 0d 26 65 e4 8d 20 ac 27 73 ec")
    write("metawear", "bmi270-stream", bytes([0x1B, 0x27, 0x00, 0x03]) + b"".join(record(0, nominal, bmi270_gyro) for _ in range(6))
          + b"".join(record(0, nominal, bmi270_packed) for _ in range(6)) + record(0, 58, bmi270_packed)
          + record(0, 62, bmi270_packed))
    raw = lambda count: b"\xff" + bytes(range(6 * count))
    write("metawear", "raw-triples", bytes([0x00, 0x06, 0x00, 0x02]) + record(0, nominal, raw(1)) + record(0, nominal, raw(2))
          + record(0, nominal, raw(3)) + record(0, 45, raw(2)) + record(1, 52, raw(3)) + record(2, 60, raw(1)) + record(0, 63, raw(2)))
    write("metawear", "parse-fixed-layouts", bytes([0x12, 0x00, 0x01, 0x00]) + b"".join(record(0, 0, p) for p in FIXED_LAYOUT))
    # No maps until discovery: the parser is rebuilt from the answers (bit 7).
    write("metawear", "discovery-metamotion-r", bytes([0x80, 0x01, 0x00, 0x01]) + b"".join(record(3, 0, a) for a in META_MOTION_R)
          + b"".join(record(0, nominal, gyro160) for _ in range(6)))
    write("metawear", "discovery-metamotion-s", bytes([0xC0, 0x02, 0x00, 0x01]) + b"".join(record(3, 0, a) for a in META_MOTION_S)
          + b"".join(record(0, nominal, bmi270_packed) for _ in range(6)))


def config_seeds():
    shutil.copy(os.path.join(ROOT, "config.json"), os.path.join(HERE, "Corpus", "config", "config.json"))
    base = {"gatewayId": "gw1", "bluetooth": {"transport": "tcp:127.0.0.1:7001"}, "mqtt": {"host": "127.0.0.1"},
            "sensors": [{"address": "C4:BE:84:00:00:01", "userId": "u1"}]}
    variants = {
        "minimal": {},
        "mqtt-full": {"mqtt": {"host": "h", "port": 8883, "username": "u", "passwordFile": "password", "topicPrefix": "site/1",
                               "messageExpirySeconds": 60, "sessionExpirySeconds": 0,
                               "tls": {"caFile": "ca.pem", "certFile": "c.pem", "keyFile": "k.pem"}}},
        "admin": {"admin": {"socketPath": "/run/g.sock", "mode": "0600", "group": "ops", "allowedUids": [0, 1000],
                            "allowedGroups": ["ops"]}},
        "boards-and-ha": {"boards": {"buttonStartsSession": True, "ledOnStreaming": True, "batteryIntervalSeconds": 60},
                          "homeAssistant": {"enabled": True, "discoveryPrefix": "site-1/ha"}},
        "sensors-rates": {"gyro": {"odrHz": 800, "rangeDps": 500}, "accelerometer": {"enabled": True, "odrHz": 12.5, "rangeG": 16},
                          "sensors": [{"address": "C4:BE:84:00:00:01", "userId": "u1", "name": "left"},
                                      {"address": "c4:be:84:00:00:02", "userId": "u2"}]},
        "location-retention": {"location": {"latitude": 51.5, "longitude": -0.12}, "retention": {"maxStoreBytes": 1073741824},
                               "timeZone": "Europe/London", "firstWeekday": "sunday", "capture": {"chunkSize": 500, "commitIntervalMs": 250},
                               "sessions": {"autoStart": False, "idleTimeoutSeconds": 60, "maxDurationMinutes": 30}},
        "bad-values": {"gyro": {"odrHz": 30, "rangDps": 500}, "mqtt": {"host": "h", "hots": "x", "port": 70000},
                       "timeZone": "Mars/Olympus_Mons", "firstWeekday": "funday", "gatewayId": "$SYS",
                       "bluetooth": {"transport": "serial:ttyACM0:12345", "maxSensors": 20},
                       "admin": {"mode": "rw-rw----"}, "capture": {"commitIntervalMs": 2.5}},
    }
    for name, edit in variants.items():
        document = dict(base)
        document.update(edit)
        write("config", name + ".json", json.dumps(document, indent=1).encode())
    write("config", "not-an-object.json", b"[1, 2.5e300, -0, \"x\\u00e9\", null, true]")


def admin_seeds():
    def post(path, body, extra=""):
        return "POST %s HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n%s\r\n%s" % (path, len(body.encode()), extra, body)

    requests = {
        "status": "GET /v1/status HTTP/1.1\r\nHost: x\r\n\r\n",
        "metrics": "GET /metrics HTTP/1.1\r\nHost: x\r\nAccept: */*\r\n\r\n",
        "sessions-query": "GET /v1/sessions?range=week&user=u%201+x&empty= HTTP/1.1\r\nHost: x\r\n\r\n",
        "start-session": post("/v1/sessions", "{\"device\":\"C4:BE:84:00:00:01\",\"userId\":\"u1\"}", "Content-Type: application/json\r\n"),
        "hazards": post("/v1/sessions/abc_1/hazards", "{\"fall\":2}"),
        "expect-continue": post("/v1/sessions", "{}", "Expect: 100-continue\r\n"),
        "chunked": "POST /v1/sessions HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n4\r\n{\"a\"\r\n3\r\n:1}\r\n0\r\n\r\n",
        "delete": "DELETE /v1/sessions/abc_1 HTTP/1.1\r\nHost: x\r\n\r\n",
        "encoded-traversal": "GET /v1/documents/records/..%2f..%2fetc%2fpasswd HTTP/1.1\r\nHost: x\r\n\r\n",
        "bad-percent": "GET /v1/status%zz?a=%e9%ff HTTP/1.1\r\nHost: x\r\n\r\n",
        "nul-in-path": "GET /v1/documents/records/a%00b HTTP/1.1\r\nHost: x\r\n\r\n",
        "header-without-colon": "GET /v1/status HTTP/1.1\r\nno colon here\r\n\r\n",
        "conflicting-lengths": "POST /v1/sessions HTTP/1.1\r\nContent-Length: 2\r\nContent-Length: 9\r\n\r\n{}",
        "http2-preface": "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n",
        "bare-lf": "GET /v1/sensors/C4:BE:84:00:00:01 HTTP/1.1\nHost: x\n\n",
        "pipelined": "GET /v1/status HTTP/1.1\r\n\r\nGET /metrics HTTP/1.1\r\n\r\n",
        "http10": "GET /v1/medals?user=u1 HTTP/1.0\r\n\r\n",
        "many-headers": "GET /v1/status HTTP/1.1\r\n" + "".join("X-F-%d: %s\r\n" % (i, "b" * 20) for i in range(12)) + "\r\n",
        "long-line": "GET /v1/status?x=" + "a" * 300 + " HTTP/1.1\r\nHost: x\r\n\r\n",
    }
    for name, text in requests.items():
        # Byte 0: limits (bits 0-1) and chunking; production limits and a small set for each.
        write("admin", name, b"\x00" + text.encode("latin-1"))
        write("admin", name + "-small-limits", b"\x05" + text.encode("latin-1"))
    # The known head-limit bypass (see checkHeadWithinLimits in Admin/FuzzAdmin.swift): an empty
    # line before a 27-byte request line, with a 24-byte limit. Fails only with GYROGATE_FUZZ_STRICT_HEAD=1.
    write("admin", "leading-empty-line", b"\x06\r\nGET /v1/status?x=1 HTTP/1.1\r\n\r\n")



def zoneinfo_seeds():
    # Real TZif files (v2 and v3 footers, southern hemisphere, 30- and 45-minute offsets) from this
    # machine's tzdata, and footer rules on their own.
    for name in ["Europe/Berlin", "Australia/Sydney", "America/Santiago", "Asia/Kolkata", "Pacific/Chatham", "Etc/UTC"]:
        path = os.path.join("/usr/share/zoneinfo", name)
        if os.path.exists(path):
            with open(path, "rb") as f:
                write("zoneinfo", name.replace("/", "-"), f.read())
    for i, rule in enumerate(["CET-1CEST,M3.5.0,M10.5.0/3", "<-04>4<-03>,M9.1.6/24,M4.1.6/24", "IST-1GMT0,M10.5.0,M3.5.0/1",
                              "EST5EDT,0/0,J365/25", "<+0330>-3:30<+0430>,J79/24,J263/24", "<+1245>-12:45<+1345>,M9.5.0/2:45,M4.1.0/3:45"]):
        write("zoneinfo", "rule-%d" % i, rule.encode())

if __name__ == "__main__":
    shutil.rmtree(os.path.join(HERE, "Corpus"), ignore_errors=True)
    os.makedirs(os.path.join(HERE, "Corpus", "config"))
    h4_seeds()
    acl_seeds()
    att_seeds()
    metawear_seeds()
    config_seeds()
    zoneinfo_seeds()
    admin_seeds()
    for target in sorted(os.listdir(os.path.join(HERE, "Corpus"))):
        files = os.listdir(os.path.join(HERE, "Corpus", target))
        size = sum(os.path.getsize(os.path.join(HERE, "Corpus", target, f)) for f in files)
        print("%-9s %3d seeds, %6d bytes" % (target, len(files), size))
